"""Input checks shared by every public function: they raise InvalidInputError naming the argument, and refuse
sizes before anything is allocated (InstanceTooLargeError).

=========  ========================================================================================================
arguments  arrays, arm sets, counts, slacks, tolerances, weights, unique maximisers (:func:`as_arms`, ...)
sizes      memory limits checked before allocating (:func:`check_array_size`) and huge counts in messages
files      the files the toolkit reads whole or writes, checked before any work
=========  ========================================================================================================

``__all__`` lists the checks that code built on the toolkit (new designs, bandit instances) uses to refuse bad
input the same way; the other names are size and scale checks specific to one family of programs.
"""

# the names outside __all__ are re-exported for the toolkit's own modules (explicitly: ``name as name``)
from .arguments import (
    ARM_SCALE as ARM_SCALE,
)
from .arguments import (
    COUNT_LIMIT as COUNT_LIMIT,
)
from .arguments import (
    RANK_ESTIMATE_MARGIN as RANK_ESTIMATE_MARGIN,
)
from .arguments import (
    RANK_QR_MIN as RANK_QR_MIN,
)
from .arguments import (
    TIE_RTOL,
    as_arms,
    as_count,
    as_matrix,
    as_nonnegative,
    as_tolerance,
    as_vector,
    check_weights,
    unique_argmax,
)
from .arguments import (
    check_direction_scale as check_direction_scale,
)
from .arguments import (
    check_enumerable as check_enumerable,
)
from .arguments import (
    check_m_best as check_m_best,
)
from .arguments import (
    check_scale as check_scale,
)
from .arguments import (
    real_array as real_array,
)
from .arguments import (
    triangular_rank as triangular_rank,
)
from .files import (
    IMAGE_SUFFIXES as IMAGE_SUFFIXES,
)
from .files import (
    MAX_INPUT_BYTES as MAX_INPUT_BYTES,
)
from .files import (
    check_image_path,
    check_input_file,
)
from .sizes import (
    MAX_ARRAY_ENTRIES as MAX_ARRAY_ENTRIES,
)
from .sizes import (
    check_array_size,
    count_text,
)

__all__ = [
    "TIE_RTOL",
    "as_arms",
    "as_count",
    "as_matrix",
    "as_nonnegative",
    "as_tolerance",
    "as_vector",
    "check_array_size",
    "check_image_path",
    "check_input_file",
    "check_weights",
    "count_text",
    "unique_argmax",
]

"""What runs around a computation: its time limit and Ctrl-C, its progress line, the solver that runs it, BLAS
threads, and the width of what a command prints. Nothing is imported here: each module is loaded when used.

========  ===========================================================================================================
deadline  time limits and Ctrl-C for iterative solves and long loops (the best certified result so far)
progress  one-line progress reports of long solves (shown by ``optdesign solve``)
solvers   which solver runs (MOSEK if licensed, else CLARABEL, else SCS) and the status policy
session   a kept CLARABEL solver for re-solves with new parameter values
blas      single-threaded BLAS for the fast paths (tiny matrices)
terminal  the width of what the command lines print (at most 80 columns) and help text that reflows
exports   a package's re-exports loaded on first use (PEP 562), for packages outside optdesign too
========  ===========================================================================================================
"""

"""The ground every algorithm family builds on: what an algorithm and an environment are, the statistics, the
stopping thresholds and the tracking rules, shared by the subpackages (none of which it imports).

============  ==========================================================================================
algorithm     the Algorithm / Policy / Environment interfaces the runner drives, and the Question it scores by
environments  linear instances (arms, items, theta, Gaussian noise) simulated through reward sums
alternatives  closest alternatives of linear problems: whitening, directions, piece values and gradients
statistics    linear sufficient statistics and the GLR over the items; spanning subsets of arms
stopping      thresholds beta(t, delta) (practical, Soare, theory, KK21, bilinear) and the delta checks
thresholds    the one table of thresholds by name, and what each algorithm family accepts
tracking      C-tracking with a floor, geometric checkpoints, rounding a batch to a budget
entries       the one grammar of ``name:key=value,...`` entries and ``package.module:attr`` references
seeds         one seed, two independent streams: the environment's noise and the algorithm's draws
run_time      the run-time rule of a run to a budget: a budget it cannot finish in a year is refused
validation    the option checks shared by the families (growth, choices, Top-Two beta, sigma)
============  ==========================================================================================
"""

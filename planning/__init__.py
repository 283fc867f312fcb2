"""Static memory planning, in typed Python (and one C file), no xDSL.

- ``model``: ``Buffer`` / ``Pool`` / ``Problem`` / ``Plan`` / ``Placement`` /
  ``PlanningError`` (the interface with the IR side);
- ``algorithms``: ``ALGORITHMS``, ``DEFAULT_ALGORITHM``, ``get_algorithm``;
  the algorithms live in ``greedy`` (TVM's greedy_by_size /
  greedy_by_conflicts), ``hill_climb`` (TVM's, seeded), ``best_fit``
  (the default: portfolio + ``minimize`` search), over the shared
  order decoder of ``placement``, and ``exact`` (``optimal``: MiniMalloc's
  search of ``minimalloc_solver`` under a time limit); ``minimize`` probes
  capacities with that search (and has ``window_bound``);
  ``minimalloc_native`` builds and loads its C twin ``minimalloc_search.c``;
- ``lower_bound``: liveness / clique lower bounds;
- ``validate``: the independent plan validator (shares no code with the
  planners);
- ``minimalloc`` / ``problem_json``: MiniMalloc CSV and JSON problem files.
"""

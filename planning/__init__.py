"""Static memory planning, in plain typed Python (no xDSL).

- ``model``: ``Buffer`` / ``Pool`` / ``Problem`` / ``Plan`` / ``Placement`` /
  ``PlanningError`` (the interface with the IR side);
- ``algorithms``: ``ALGORITHMS``, ``DEFAULT_ALGORITHM``, ``get_algorithm``;
  the algorithms live in ``greedy`` (TVM's greedy_by_size /
  greedy_by_conflicts), ``hill_climb`` (TVM's, seeded), ``best_fit``
  (the default: portfolio + ``minimize`` search), over the shared
  order decoder of ``placement``, and ``exact`` (``optimal``: MiniMalloc's
  search of ``minimalloc_solver`` under a time limit);
- ``lower_bound``: liveness / clique lower bounds;
- ``validate``: the independent plan validator (shares no code with the
  planners);
- ``minimalloc`` / ``problem_json``: MiniMalloc CSV and JSON problem files.
"""

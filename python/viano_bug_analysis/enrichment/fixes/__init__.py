"""Already fixed? The commits that may have fixed a report, with their reasons.

``clues``: what the report and the facts give to match (links, trace, entities);
``evidence``: the reasons, the score, the ranking and the verdict (pure);
``source``: the histories read (the configured source and its upstream);
``phase``: the build phase stating ``project_fix_candidate`` and ``project_fix_search``
(``kinds``); ``render``: those facts as text for every renderer.

The package imports nothing itself, so a renderer reads ``render`` without the engine.
"""

"""``vba triage``: many tracker reports at once, each its own case package (docs/triage.md).

``reports`` reads an issue list or folder and selects from it, ``run`` takes
each report through import, build and (with an LLM) investigation,
resumably, ``index`` and ``html`` write the backlog on one page, and
``command`` is the command line.
"""

"""Hypothesis investigation: the controller loop around the LLM and its tools.

    from viano_bug_analysis.investigation.controller import InvestigationController
    from viano_bug_analysis.investigation.config import load_investigation_config

- :mod:`.controller`: the loop (prompt, call, recovery, reservation, dispatch,
  evidence, checkpoints); :mod:`.prompts` builds the prompts from stored
  context; :mod:`.steps` is the write-once step log;
- :mod:`.llm`: the OpenAI-compatible chat-completions adapter;
- :mod:`.recovery`: bounded response-format recovery and the call audit;
- :mod:`.budget`, :mod:`.checkpoints`, :mod:`.evidence`: the append-only
  stores the controller keeps in the package.

See docs/investigation.md. Submodules are imported on use, so importing this
package stays cheap.
"""

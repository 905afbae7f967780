"""Hypothesis investigation: the controller loop around the LLM and its tools.

So far this holds :mod:`.recovery`, the bounded response-format recovery.
"""

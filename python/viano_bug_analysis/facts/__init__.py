"""The fact vocabulary of the enrichment index (issue 33: owned by the fact-vocabulary work).

Only the parts the investigation uses are here, in a minimal form: the owner's
modules replace them with the same signatures.
"""

"""Shared benchmark settings: every group prints its ratios against its baseline."""

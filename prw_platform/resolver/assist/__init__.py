"""LLM assistance for reviewers (if_llm_extract, if_llm_review): proposals and advice that annotate review
cases and never decide (DEC-02). ``service`` (the ``assist`` stage), ``store`` (its tables; the review read shows
them beside the case).

The package imports only ``store`` here, so that the review read can use it without loading the stage.
"""

from prw_platform.resolver.assist.store import Advice, Proposal, advice_for_case, proposals_for_capture

__all__ = ["Advice", "Proposal", "advice_for_case", "proposals_for_capture"]

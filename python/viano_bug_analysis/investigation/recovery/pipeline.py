"""One investigation's recovery, with its policy fixed for its whole life.

A running investigation is never switched to another policy: the policy is
set when the pipeline is created (for a new investigation explicitly, for a
resumed one from its stored form) and cannot be replaced afterwards.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NoReturn

from viano_bug_analysis.investigation.recovery.audit import CallRecordStore
from viano_bug_analysis.investigation.recovery.contract import ResponseContract
from viano_bug_analysis.investigation.recovery.errors import POLICY_FIXED, PolicyError
from viano_bug_analysis.investigation.recovery.flow import (
    RecoveryContext,
    RecoveryLimits,
    RecoveryResult,
    RepairProvider,
    recover_response,
)
from viano_bug_analysis.investigation.recovery.policy import RecoveryPolicy


class RecoveryPipeline:
    """Recovery for one investigation: a fixed policy, a provider and the package audit."""

    __slots__ = ("_audit_store", "_policy", "_provider")
    _policy: RecoveryPolicy
    _provider: RepairProvider
    _audit_store: CallRecordStore | None

    def __init__(
        self,
        policy: RecoveryPolicy,
        *,
        provider: RepairProvider,
        audit_store: CallRecordStore | None,
    ) -> None:
        # New investigations must initialize the policy: there is no default here.
        if not isinstance(policy, RecoveryPolicy):
            raise PolicyError(POLICY_FIXED, "a recovery pipeline needs an explicit policy")
        object.__setattr__(self, "_policy", policy)
        object.__setattr__(self, "_provider", provider)
        object.__setattr__(self, "_audit_store", audit_store)

    @classmethod
    def resume(
        cls,
        stored_policy: Mapping[str, Any],
        *,
        provider: RepairProvider,
        audit_store: CallRecordStore | None,
        requested: RecoveryPolicy | None = None,
    ) -> RecoveryPipeline:
        """The pipeline of a stored investigation, with the policy it was stored with.

        ``requested`` is what today's configuration would choose; if it
        differs from the stored policy, resuming refuses instead of switching.
        """
        policy = RecoveryPolicy.from_mapping(stored_policy)
        if requested is not None and requested != policy:
            raise PolicyError(
                POLICY_FIXED,
                "a running investigation keeps its stored recovery policy",
                {
                    "stored": policy.response_recovery_version,
                    "requested": requested.response_recovery_version,
                },
            )
        return cls(policy, provider=provider, audit_store=audit_store)

    @property
    def policy(self) -> RecoveryPolicy:
        return self._policy

    def switch_policy(self, policy: RecoveryPolicy) -> NoReturn:
        """Always refuses: a running investigation is never switched."""
        raise PolicyError(
            POLICY_FIXED,
            "a running investigation keeps its recovery policy",
            {"stored": self._policy.response_recovery_version},
        )

    def __setattr__(self, name: str, value: object) -> None:
        raise PolicyError(POLICY_FIXED, "a recovery pipeline cannot be changed once created")

    def __delattr__(self, name: str) -> None:
        raise PolicyError(POLICY_FIXED, "a recovery pipeline cannot be changed once created")

    def recover(
        self,
        raw_text: str,
        *,
        contract: ResponseContract,
        context: RecoveryContext,
        limits: RecoveryLimits,
    ) -> RecoveryResult:
        """:func:`~.flow.recover_response` under this investigation's policy."""
        return recover_response(
            raw_text,
            contract=contract,
            policy=self._policy,
            context=context,
            provider=self._provider,
            audit_store=self._audit_store,
            limits=limits,
        )


__all__ = ["RecoveryPipeline"]

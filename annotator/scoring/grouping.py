"""Which metadata key names each golden's system (its retriever, unless --group-by says
otherwise): one rule for the report, the leaderboard, the TREC run and the sampling designs."""

from __future__ import annotations

from annotator.errors import SessionError
from annotator.store.session import Session

DEFAULT_GROUP_BY = "retriever"


def system_values(session: Session, group_by: str | None) -> tuple[str, dict[str, str]]:
    """(the metadata key naming each golden's system, golden id -> its system): ``group_by``,
    or 'retriever' when none is given; a key given that no golden carries is refused."""
    key = group_by or DEFAULT_GROUP_BY
    values = session.metadata_values(key)
    if group_by is not None and not values:
        raise SessionError(f"No golden in the session has metadata '{key}'; choose a key the "
                           "goldens carry with --group-by.")
    return key, {golden_id: str(value) for golden_id, value in values.items()}

"""Which epoch of each judge a report reads, what it leaves out, and the judge's last re-check:
verdicts of two epochs are never pooled, and never dropped without a word."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

from annotator.resolve import epochs_named
from annotator.store.session import Session


@dataclass(frozen=True, slots=True)
class Epochs:
    """A judge's epochs: the one read, every one with verdicts, its last re-check."""

    judge: str
    read: str | None
    """The epoch whose verdicts are read (None: the judge has no verdict)."""
    chosen: bool
    """Read because --epoch chose it (else: the latest)."""
    every: list[dict[str, Any]]
    """Each epoch holding verdicts, oldest first (Session.judge_epochs; counted when there
    are several, or one was chosen)."""
    last_recheck: dict[str, Any] | None

    @property
    def others(self) -> list[dict[str, Any]]:
        """The epochs with verdicts that are not read."""
        return [e for e in self.every if e["epoch"] != self.read]


def epochs_given(session: Session, given: Sequence[str]) -> AbstractContextManager[None]:
    """While inside, read each judge's verdicts of the epoch given for it (--epoch's values:
    EPOCH or JUDGE=EPOCH, shortened to 4 characters or more), every other judge's latest."""
    return session.epochs_read(dict(epochs_named(session.judge_epochs(counted=False), given)))


def epochs_of(session: Session, judge: str) -> Epochs:
    """A judge's epochs as this session reads them (their chunks counted only where it has
    several, or one was chosen: counting passes over every verdict of the judge)."""
    every = [e for e in session.judge_epochs(judge, counted=False) if e["last_id"]]
    read = session.epoch_in_use(judge)
    chosen = read != (every[-1]["epoch"] if every else None)
    if len(every) > 1 or chosen:
        every = [e for e in session.judge_epochs(judge) if e["chunks"]]
    done = session.rechecks(judge)
    return Epochs(judge, read, chosen, every, done[-1] if done else None)


def served(epoch: dict[str, Any] | None) -> str:
    """'model M, fingerprint F' of an epoch row ('no fingerprint' where none was said)."""
    if epoch is None:
        return "nothing said"
    return (f"model {epoch['model'] or 'not named'}, "
            + (f"fingerprint {epoch['fingerprint']}" if epoch["fingerprint"] else
               "no fingerprint"))


def epochs_json(epochs: Epochs) -> dict[str, Any]:
    """``epoch`` (the one read) and, where the verdicts span several, ``epochs`` (each with its
    model, fingerprint, chunks and whether it is read); ``last_recheck`` where there is one."""
    out: dict[str, Any] = {"epoch": epochs.read}
    if len(epochs.every) > 1 or epochs.chosen:
        out["epochs"] = [{"epoch": e["epoch"], "model": e["model"],
                          "fingerprint": e["fingerprint"], "chunks": e["chunks"],
                          "first_at": e["first_at"], "last_at": e["last_at"],
                          "read": e["epoch"] == epochs.read} for e in epochs.every]
    if epochs.last_recheck is not None:
        figures = epochs.last_recheck["figures"]
        out["last_recheck"] = {"recheck": epochs.last_recheck["id"],
                               "at": epochs.last_recheck["finished_at"],
                               "worse": figures["worse"],
                               "kappa_drop": figures["kappa_drop"]["value"]}
    return out


def span_sentence(epochs: Epochs) -> str | None:
    """What is left out when a judge's verdicts span several epochs (None when they do not)."""
    others = epochs.others
    if not others:
        return None
    read = next((e for e in epochs.every if e["epoch"] == epochs.read), None)
    which = "the one chosen with --epoch" if epochs.chosen else "the latest"
    left = "; ".join(f"{e['epoch']} ({served(e)}, {e['chunks']:,} chunks)" for e in others)
    return (f"Judge '{epochs.judge}' has verdicts of {len(epochs.every)} epochs: this reads "
            f"{which}, {epochs.read} ({served(read)}, {read['chunks'] if read else 0:,} chunks), "
            f"and leaves out {left}. Verdicts of two epochs are never pooled: read another with "
            f"--epoch, or run 'annotator judge' again to judge those chunks as the judge is "
            "served now.")


def recheck_words(epochs: Epochs) -> str:
    """'re-checked 2026-12-07: worse (kappa drop 0.12)', or 'never re-checked'."""
    done = epochs.last_recheck
    if done is None:
        return "never re-checked"
    drop = done["figures"]["kappa_drop"]["value"]
    return (f"re-checked {str(done['finished_at'])[:10]}: "
            + ("worse" if done["figures"]["worse"] else "not worse")
            + (f" (kappa drop {drop:.3f})" if drop is not None else ""))


def epoch_line(every: list[Epochs]) -> str | None:
    """One line naming each judge's epoch read and its last re-check (None without epochs)."""
    named = [e for e in every if e.read is not None]
    if not named:
        return None
    return "Epochs read: " + "; ".join(f"'{e.judge}' {e.read} ({recheck_words(e)})"
                                       for e in named) + "."

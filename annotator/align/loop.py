"""`annotator align`: propose prompts from the dev split, keep one only if the test split says so.

The labelled dev goldens are cut in two, once per run, by the seed: the optimizer sees the
judge's disagreements on the first part only (train), and each candidate is judged and scored
on the second (validation), so choosing among candidates is honest too. Each round asks the
optimizer for ``candidates`` revisions of the best prompt so far (the incumbent at first; a
later round's disagreements are the best one's own on train). The best candidate of the run,
and only it, is judged on the test split, once, and compared with the incumbent by the paired
bootstrap the leaderboard uses: it is kept (written as NAME-aligned-K.toml and registered as
judge NAME-aligned-K) only when its kappa is higher with the 95% interval of the difference
above 0. No test golden's text, label or note reaches the optimizer: its requests are built
from train goldens alone.

Every optimizer request, reply and candidate is stored (``align_candidates``) with its
validation score and cost, and the run with its test figures (``align_runs``). Candidates are
judged under names of their own, removed once scored unless kept: a run that stops for any
reason (the budget, a hopeless endpoint, Ctrl-C) registers nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import random
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from annotator.align import optimizer
from annotator.calibration.feedback import Disagreement, confusion, disagreements, unjudged, with_truth
from annotator.errors import AnnotatorError, SessionError
from annotator.judge import tokens
from annotator.judge.client import next_format
from annotator.judge.failures import kind
from annotator.judge.plan import dry_run
from annotator.judge.runner import (
    RunOptions,
    RunStats,
    resume_transport,
    retry_wait,
    run_judge,
    stored_settings,
    system_as_user,
)
from annotator.judge.template import TemplatePrompt
from annotator.judge.transport import Transport
from annotator.judge.types import CallResult, JudgeSettings
from annotator.models import CANDIDATE_MARK, Price
from annotator.people.presence import is_open, one_screen
from annotator.scoring.splits import assign_splits
from annotator.stats.chunk_agreement import cohen_kappa, percent_agreement
from annotator.store.session import Session, now
from annotator.text import counted
from annotator.untrusted import parse_json

Outcome = Literal["kept", "not distinguishable", "worse", "nothing to learn", "no candidate",
                  "no better candidate", "stopped"]
OPTIMIZER_MAX_TOKENS = 4096
COLD_TIMEOUT_S = 600.0
"""The optimizer's timeout unless --timeout is given (as a judge's first calls)."""


class AlignStopped(AnnotatorError):
    """An align run that cannot go on (a hopeless endpoint, the budget): nothing registered."""


@dataclass(slots=True)
class AlignOptions:
    """What an align run does, and how hard it may push."""

    judge: str
    optimizer_model: str
    optimizer_url: str | None = None
    rounds: int = 1
    candidates: int = 3
    sample: int = 12
    """Disagreements shown in one optimizer request."""
    validation: float = 0.5
    """The share of the labelled dev goldens candidates are scored on (the rest: train)."""
    seed: int = 0
    annotator: str | None = None
    """Whose labels are the truth (None: the team's)."""
    instructions: list[str] | None = None
    """A team's vetted instructions (--instructions): the optimizer only adds or removes them."""
    max_calls: int | None = None
    budget: float | None = None
    judge_price: Price | None = None
    optimizer_price: Price | None = None
    optimizer_temperature: float = 0.7
    optimizer_system_as_user: bool = False
    """Send the optimizer's instructions in its user message (a chat template that drops
    system messages)."""
    out_dir: Path = Path(".")
    resamples: int = 2000
    run: RunOptions = field(default_factory=RunOptions)


@dataclass(slots=True)
class Spend:
    """Calls, tokens and cost, spent or expected."""

    calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    cost: float = 0.0

    def add(self, other: Spend) -> None:
        """Count another step in."""
        self.calls += other.calls
        self.tokens_in += other.tokens_in
        self.tokens_out += other.tokens_out
        self.cost += other.cost


@dataclass(slots=True)
class Scored:
    """A prompt and how it did on the validation goldens."""

    name: str
    """The judge its verdicts are stored under."""
    prompt: TemplatePrompt
    kappa: float | None
    agreement: float | None
    chunks: int
    candidate_id: int | None = None
    """Its row in align_candidates (None: the incumbent)."""

    def key(self) -> tuple[float, float]:
        """How candidates rank: kappa, then agreement (an undefined kappa ranks last)."""
        return (self.kappa if self.kappa is not None else -math.inf,
                self.agreement if self.agreement is not None else -math.inf)


@dataclass(slots=True)
class AlignResult:
    """What an align run found and did."""

    run_id: int
    outcome: Outcome
    sentence: str
    incumbent_kappa: float | None = None
    best: Scored | None = None
    test: dict[str, Any] = field(default_factory=dict)
    registered_as: str | None = None
    prompt_path: Path | None = None
    spent: Spend = field(default_factory=Spend)
    candidates: int = 0
    rejected: int = 0


@dataclass(frozen=True, slots=True)
class Prepared:
    """What a run stands on, read before anything is sent."""

    settings: JudgeSettings
    prompt: TemplatePrompt
    train: list[str]
    validation: list[str]
    test: list[str]
    target: str
    """The name a kept candidate is registered under."""


@dataclass(frozen=True, slots=True)
class AlignPlan:
    """What a run would send, at most, and what it would cost (--dry-run)."""

    optimizer: Spend
    judging: Spend
    validation_chunks: int
    train_chunks: int
    test_chunks: int
    priced: bool

    @property
    def total(self) -> Spend:
        """Everything together."""
        out = Spend()
        out.add(self.optimizer)
        out.add(self.judging)
        return out


def prepare(session: Session, options: AlignOptions) -> Prepared:
    """Check what the run needs and split the labelled dev goldens; SessionError otherwise."""
    judges = {j.name: j for j in session.judges()}
    if options.judge not in judges:
        known = ", ".join(sorted(judges)) or "none yet"
        raise SessionError(f"There is no judge '{options.judge}' in {session.where} (judges: "
                           f"{known}).")
    settings = stored_settings(judges[options.judge])
    # Candidates are judged in the response format and with the logprobs the judge's endpoint
    # settled on, not refused again by each new candidate's judge.
    resume_transport(session, options.judge, settings)
    if not isinstance(settings.prompt, TemplatePrompt):
        raise SessionError(f"Judge '{options.judge}' sends RAGAS's own prompt through its "
                           "library, which align cannot revise; align a judge made from a "
                           "template ('annotator prompts show ragas > mine.toml' writes one).")
    splits = session.splits()
    if not splits:
        raise SessionError("align needs a dev/test split, so that candidates are chosen on dev "
                           f"and judged once on test: 'annotator split {session.where} --dev 0.5 "
                           "--seed 1'.")
    seen = {g for g, _, _ in session.judge_examples().get(options.judge, [])}
    ids = [g for g in session.golden_ids() if g not in seen]
    dev = with_truth(session, [g for g in ids if splits.get(g) == "dev"], options.annotator)
    test = with_truth(session, [g for g in ids if splits.get(g) == "test"], options.annotator)
    if len(dev) < 2 or len(test) < MIN_TEST_GOLDENS:
        raise SessionError(
            f"align needs people's labels on at least 2 dev goldens and {MIN_TEST_GOLDENS} test "
            f"goldens (there are {len(dev)} and {len(test)}): below that the test split can "
            "almost never show a better candidate (one better by 0.1 kappa is kept about 1% of "
            "the time at 5), so the run would spend its calls for nothing. Label more of them "
            f"with 'annotator annotate {session.where}'.")
    parts = assign_splits(dev, 1 - options.validation, options.seed)
    train = [g for g in dev if parts[g] == "dev"]
    validation = [g for g in dev if parts[g] == "test"]
    if not train or not validation:
        train, validation = dev[: len(dev) // 2], dev[len(dev) // 2:]
    missing = unjudged(session, options.judge, dev + test, options.annotator)
    if missing:
        raise SessionError(
            f"Judge '{options.judge}' has no verdict on {counted(missing, 'labelled chunk')} of "
            "the dev and test splits, and align compares candidates with its verdicts there: "
            "run the judge command that made it again (it resumes), then align.")
    taken = set(judges)
    number = 1
    while f"{options.judge}-aligned-{number}" in taken or (
            options.out_dir / f"{options.judge}-aligned-{number}.toml").exists():
        number += 1
    return Prepared(settings, settings.prompt, train, validation, test,
                    f"{options.judge}-aligned-{number}")


def plan(session: Session, options: AlignOptions, prepared: Prepared) -> AlignPlan:
    """The most a run would send (every candidate judged, the best re-judged on train each
    later round) and its cost where prices are known; nothing is sent."""
    def judging(goldens: list[str]) -> tuple[int, Spend]:
        run = replace(options.run, goldens=frozenset(goldens), limit=None)
        made = dry_run(session, "~align-estimate", prepared.settings, run,
                       options.judge_price, None, None)
        return made.chunks, Spend(made.calls, made.prompt_tokens, made.completion_tokens,
                                  made.cost or 0.0)

    asks = options.rounds * options.candidates
    validation_chunks, per_candidate = judging(prepared.validation)
    train_chunks, per_train = judging(prepared.train)
    test_chunks, on_test = judging(prepared.test)
    sample = list(disagreements(session, options.judge, prepared.train, prepared.prompt.against,
                                options.annotator))[: options.sample]
    messages = optimizer.request_messages(prepared.prompt, sample, {}, options.instructions)
    per_ask = tokens.prompt_tokens(messages)
    optimizing = Spend(asks, asks * per_ask, asks * OPTIMIZER_MAX_TOKENS)
    if options.optimizer_price is not None:
        optimizing.cost = options.optimizer_price.cost(optimizing.tokens_in, optimizing.tokens_out)
    judged = Spend()
    for step, times in ((per_candidate, asks), (per_train, options.rounds - 1), (on_test, 1)):
        judged.add(Spend(step.calls * times, step.tokens_in * times, step.tokens_out * times,
                         step.cost * times))
    return AlignPlan(optimizing, judged, validation_chunks, train_chunks, test_chunks,
                     options.judge_price is not None and options.optimizer_price is not None)


class _Run:
    """One align run's state: what was spent, the candidates' judges still in the session."""

    def __init__(self, session: Session, options: AlignOptions, prepared: Prepared,
                 judge_client: Transport, optimizer_client: Transport,
                 say: Callable[[str], None], show: Callable[[RunStats], None] | None) -> None:
        self.session, self.options, self.prepared = session, options, prepared
        self.judge_client, self.optimizer_client = judge_client, optimizer_client
        self.say, self.show = say, show
        self.spent = Spend()
        self.run_id = 0
        self.temporary: set[str] = set()
        self.by_candidate: dict[int, Spend] = {}
        self.shown: set[int] = set()
        """Chunks already shown to the optimizer (later requests show others first)."""
        self.optimizer_format = optimizer_client.formats[0]
        """The response format the optimizer's endpoint takes, as far as the run has seen."""

    # -- the budget -------------------------------------------------------------------------

    def affordable(self, step: Spend) -> bool:
        """Whether a step expected to cost ``step`` fits what is left of the budget."""
        options = self.options
        if options.max_calls is not None and self.spent.calls + step.calls > options.max_calls:
            return False
        return options.budget is None or self.spent.cost + step.cost <= options.budget

    def judging_step(self, goldens: list[str]) -> Spend:
        """What judging these goldens' chunks is expected to cost."""
        run = replace(self.options.run, goldens=frozenset(goldens), limit=None)
        made = dry_run(self.session, "~align-estimate", self.prepared.settings, run,
                       self.options.judge_price, None, None)
        return Spend(made.calls, made.prompt_tokens, made.completion_tokens, made.cost or 0.0)

    # -- the optimizer ----------------------------------------------------------------------

    async def ask(self, messages: list[dict[str, str]], candidate: int) -> str | None:
        """The optimizer's reply to one request (retried where a retry can help; every request
        sent is charged to the candidate, answered or not); AlignStopped when the endpoint is
        hopeless, CandidateError when it never answered.

        The reply is asked for in the first response format the endpoint takes, as the judge
        asks (a refusal moves to the next at once, and the run keeps what it settled on).
        """
        options = self.options
        if options.optimizer_system_as_user:
            messages = system_as_user(messages)
        spent = Spend()
        attempt = 0
        # A whole prompt is a long reply: no fitted timeout here, the generous cold one.
        timeout = options.run.timeout if options.run.timeout is not None else COLD_TIMEOUT_S
        try:
            while True:
                mode = self.optimizer_format
                client = self.optimizer_client
                body = optimizer.request_body(type(client), options.optimizer_model, messages,
                                              options.instructions is not None,
                                              options.optimizer_temperature, OPTIMIZER_MAX_TOKENS,
                                              mode)
                spent.calls += 1
                # The judge's transport, error ladder (failures.kind says whether asking again
                # can help) and retry policy.
                reply = await client.send(body, timeout)
                if isinstance(reply, CallResult):
                    failed = reply
                    if failed.cause == "connection":
                        raise AlignStopped(
                            f"The optimizer could not be reached: {failed.error}.")
                    if "response_format" in failed.unsupported and (
                            following := next_format(mode, client.formats)) is not None:
                        self.say(f"The optimizer's endpoint refused {mode}; now asking with "
                                 f"{following}.")
                        self.optimizer_format = following
                        continue
                    if failed.cause == "http" and kind(failed)[2]:  # a wrong key, model, path
                        raise AlignStopped(
                            f"The optimizer at {client.shown_url()} refused the request "
                            f"({failed.error}); check --optimizer-model, --base-url and "
                            f"{client.key_env}.")
                else:
                    completion = client.completion(_json(reply))
                    if isinstance(completion, str):
                        raise optimizer.CandidateError(f"the optimizer's reply was unreadable "
                                                       f"({completion})")
                    spent.tokens_in += completion.tokens_in or 0
                    spent.tokens_out += completion.tokens_out or 0
                    if options.optimizer_price is not None:
                        spent.cost += options.optimizer_price.cost(completion.tokens_in or 0,
                                                                   completion.tokens_out or 0)
                    if completion.finish_reason == "length":
                        raise optimizer.CandidateError(
                            f"the optimizer's reply was cut off at {OPTIMIZER_MAX_TOKENS} tokens")
                    return completion.content
                if attempt == options.run.max_retries:
                    raise optimizer.CandidateError(
                        f"the optimizer never answered ({failed.error})")
                await asyncio.sleep(retry_wait(failed, attempt, options.run))
                attempt += 1
        finally:
            self.charge(spent, candidate)

    def sample(self, pool: list[Disagreement], round_: int, number: int) -> list[Disagreement]:
        """Up to ``sample`` disagreements, both directions alike where both exist, those not
        shown yet first, drawn by the seed."""
        rng = random.Random(f"{self.options.seed}:{round_}:{number}")
        fresh = [d for d in pool if d.chunk_id not in self.shown]
        rest = [d for d in pool if d.chunk_id in self.shown]
        picked: list[Disagreement] = []
        for group in (fresh, rest):
            by_direction = {k: [d for d in group if d.direction == k]
                            for k in ("looser", "stricter")}
            for items in by_direction.values():
                rng.shuffle(items)
            while len(picked) < self.options.sample and any(by_direction.values()):
                for items in by_direction.values():
                    if items and len(picked) < self.options.sample:
                        picked.append(items.pop())
        self.shown.update(d.chunk_id for d in picked)
        return picked

    # -- judging ----------------------------------------------------------------------------

    async def judge(self, name: str, prompt: TemplatePrompt, goldens: list[str]) -> Spend:
        """Judge these goldens' chunks with a prompt under ``name``; what it cost. A chunk left
        without a verdict is a CandidateError (a candidate is scored on every chunk or not at
        all)."""
        settings = replace(self.prepared.settings, prompt=prompt)
        stats = RunStats()
        run = replace(self.options.run, goldens=frozenset(goldens), limit=None)
        self.temporary.add(name)
        await run_judge(self.session, name, settings, self.judge_client, run, stats,
                        on_progress=self.show)
        # What the endpoint refused in this run stays refused for the next candidate.
        self.prepared.settings.response_format = settings.response_format
        self.prepared.settings.logprobs = settings.logprobs
        price = self.options.judge_price
        spent = Spend(stats.requests, stats.tokens_in, stats.tokens_out,
                      price.cost(stats.tokens_in, stats.tokens_out, stats.tokens_cached)
                      if price is not None else 0.0)
        missing = unjudged(self.session, name, goldens, self.options.annotator)
        if missing:
            groups = stats.failures.groups()
            why = f": {groups[0].sentence()}" if groups else ""
            raise optimizer.CandidateError(f"{counted(missing, 'chunk')} could not be judged"
                                           f"{why}")
        return spent

    def score(self, name: str, prompt: TemplatePrompt, goldens: list[str],
              candidate_id: int | None = None) -> Scored:
        """A judge's kappa and agreement against the truth on these goldens."""
        found = confusion(self.session, name, goldens, self.options.annotator)
        return Scored(name, prompt, cohen_kappa(found).value, percent_agreement(found).value,
                      found.n, candidate_id)

    def drop(self, name: str) -> None:
        """Remove a candidate's judge with its calls (its record stays in align_candidates)."""
        if name in self.temporary:
            self.temporary.discard(name)
            if name in {j.name for j in self.session.judges()}:
                self.session.remove_judge(name, by="align")

    def keep_only(self, names: set[str]) -> None:
        """Remove every candidate's judge but these."""
        for name in list(self.temporary - names):
            self.drop(name)

    def charge(self, spent: Spend, candidate: int | None = None) -> None:
        """Count a step's spend into the run (and its candidate's row)."""
        self.spent.add(spent)
        self.session.update_align_run(self.run_id, calls=self.spent.calls,
                                      tokens_in=self.spent.tokens_in,
                                      tokens_out=self.spent.tokens_out,
                                      cost=self.spent.cost if self.priced else None)
        if candidate is not None:
            mine = self.by_candidate.setdefault(candidate, Spend())
            mine.add(spent)
            self.session.update_align_candidate(candidate, calls=mine.calls,
                                                tokens_in=mine.tokens_in,
                                                tokens_out=mine.tokens_out)

    @property
    def priced(self) -> bool:
        """Whether every call has a price (else costs are unknown, not 0)."""
        return self.options.judge_price is not None and self.options.optimizer_price is not None


def _json(text: Any) -> Any:
    try:
        # A lone surrogate in the reply's text is let through: the candidate makes it storable.
        return parse_json(text, lone_surrogates=True) if isinstance(text, str) else text
    except ValueError:  # broken, deep or huge JSON: kept as the text it was
        return text


async def align(session: Session, options: AlignOptions, prepared: Prepared,
                judge_client: Transport, optimizer_client: Transport, *,
                say: Callable[[str], None] = lambda _: None,
                show: Callable[[RunStats], None] | None = None) -> AlignResult:
    """Run the loop (see the module's docstring); the result says what was kept, if anything."""
    state = _Run(session, options, prepared, judge_client, optimizer_client, say, show)
    settings = {"rounds": options.rounds, "candidates": options.candidates,
                "sample": options.sample, "validation": options.validation, "seed": options.seed,
                "annotator": options.annotator, "instructions": options.instructions,
                "max_calls": options.max_calls, "budget": options.budget,
                "resamples": options.resamples}
    # Under the session's start lock: what a stopped run left is cleared, and this run is
    # created and holds its own lock before anyone else may look (no run is taken for dead).
    with contextlib.ExitStack() as running:
        with one_screen(session.place, "start", ALIGN_ROLE):
            for sentence in clear_stopped_runs(session):
                say(sentence)
            state.run_id = session.start_align_run(
                options.judge, prepared.settings.model, options.optimizer_model,
                options.optimizer_url, settings, prepared.train, prepared.validation)
            running.enter_context(one_screen(session.place, _run_key(state.run_id), ALIGN_ROLE))
        try:
            result = await _search(state)
        except BaseException as error:
            why = str(error) if isinstance(error, AnnotatorError) else "interrupted"
            session.update_align_run(state.run_id, outcome=f"stopped: {why}", finished_at=now())
            raise
        finally:
            state.keep_only(set())
        result.spent = state.spent
        session.update_align_run(state.run_id, outcome=result.outcome, finished_at=now())
        return result


ALIGN_ROLE = "align"
"""The presence lock's role for a running align (annotator.people.presence): the kernel's lock, so a
process killed any way frees it, and the next run knows that run is dead."""


def _run_key(run_id: int) -> str:
    return f"run-{run_id}"


def clear_stopped_runs(session: Session) -> list[str]:
    """Remove what align runs whose process died (SIGKILL, a lost machine) left: their
    candidate judges, a prompt file written for a keep never recorded; each such run is
    recorded as stopped. Sentences saying what was removed."""
    said = []
    for run in session.align_runs():
        if run["finished_at"] is not None or is_open(session.place, _run_key(run["id"]),
                                                     ALIGN_ROLE):
            continue
        prefix = f"{CANDIDATE_MARK}{run['id']}."
        stray = [j.name for j in session.judges() if prefix in j.name]
        for name in stray:
            session.remove_judge(name, by="align")
        orphan = run["prompt_path"] if run["registered_as"] is None else None
        if orphan and Path(orphan).is_file():
            Path(orphan).unlink()
        session.update_align_run(run["id"], prompt_path=None if orphan else run["prompt_path"],
                                 outcome="stopped: its process ended before the run did",
                                 finished_at=now())
        said.append(f"Align run {run['id']} was stopped before it ended (its process was "
                    f"killed): removed {counted(len(stray), 'candidate judge')}"
                    + (f" and the unrecorded prompt file {orphan}" if orphan else "") + ".")
    return said


async def _search(state: _Run) -> AlignResult:
    session, options, prepared = state.session, state.options, state.prepared
    incumbent = state.score(options.judge, prepared.prompt, prepared.validation)
    session.update_align_run(state.run_id, incumbent_kappa=incumbent.kappa)
    result = AlignResult(state.run_id, "no candidate", "", incumbent.kappa)
    pool = list(disagreements(session, options.judge, prepared.train, prepared.prompt.against,
                              options.annotator))
    if not pool:
        result.outcome = "nothing to learn"
        result.sentence = (f"Judge '{options.judge}' agrees with people on every labelled chunk "
                           f"of the {counted(len(prepared.train), 'golden')} the optimizer may "
                           "see: there is nothing to learn from, and nothing was sent.")
        return result
    current, best = incumbent, None
    stopped: str | None = None
    for round_ in range(1, options.rounds + 1):
        if round_ > 1 and current is not incumbent:
            step = state.judging_step(prepared.train)
            if not state.affordable(step):
                stopped = "the budget ran out before the next round"
                break
            try:
                state.charge(await state.judge(current.name, current.prompt, prepared.train),
                             current.candidate_id)
            except optimizer.CandidateError:
                pass  # the round goes on from the incumbent's disagreements
            else:
                pool = list(disagreements(session, current.name, prepared.train,
                                          prepared.prompt.against, options.annotator))
                if not pool:
                    break  # the best so far agrees with people on every train chunk
        counts = {k: sum(d.direction == k for d in pool) for k in ("looser", "stricter")}
        for number in range(1, options.candidates + 1):
            sample = state.sample(pool, round_, number)
            messages = optimizer.request_messages(current.prompt, sample, counts,
                                                  options.instructions)
            ask = Spend(1, 0, 0, 0.0)
            if options.optimizer_price is not None:
                ask.cost = options.optimizer_price.cost(tokens.prompt_tokens(messages),
                                                        OPTIMIZER_MAX_TOKENS)
            if not state.affordable(ask):
                stopped = "the budget ran out before the next optimizer request"
                break
            candidate_id = session.add_align_candidate(state.run_id, round_, number, messages)
            result.candidates += 1
            name = f"{options.judge}{CANDIDATE_MARK}{state.run_id}.{round_}.{number}"
            state.say(f"Round {round_}, candidate {number}: asking {options.optimizer_model}.")
            try:
                content = await state.ask(messages, candidate_id)
                session.update_align_candidate(candidate_id, reply=content)
                made = optimizer.candidate(current.prompt, content, options.instructions,
                                           f"file:{prepared.target}", f"candidate {number} of "
                                           f"round {round_}")
                session.update_align_candidate(candidate_id, prompt=made.text,
                                               rationale=made.rationale)
                step = state.judging_step(prepared.validation)
                if not state.affordable(step):
                    stopped = "the budget ran out before a candidate could be judged"
                    break
                state.charge(await state.judge(name, made.prompt, prepared.validation),
                             candidate_id)
            except optimizer.CandidateError as error:
                result.rejected += 1
                session.update_align_candidate(candidate_id, error=str(error))
                state.say(f"Round {round_}, candidate {number}: not judged, "
                          f"{str(error).rstrip('.')}.")
                state.drop(name)
                continue
            scored = state.score(name, made.prompt, prepared.validation, candidate_id)
            session.update_align_candidate(candidate_id, validation_kappa=scored.kappa,
                                           validation_agreement=scored.agreement,
                                           validation_chunks=scored.chunks)
            state.say(f"Round {round_}, candidate {number}: kappa {_figure(scored.kappa)} on "
                      f"validation (the incumbent: {_figure(incumbent.kappa)}).")
            if best is None or scored.key() > best.key():
                best = scored  # the run's best candidate: the one the test split will judge
            if scored.key() > current.key():
                current = scored  # what the next round revises
            state.keep_only({best.name, current.name})
        if stopped:
            break
    state.keep_only({best.name} if best is not None else set())
    if stopped is not None:
        result.outcome = "stopped"
        result.sentence = (f"Stopped: {stopped} ({_spent(state)}); nothing was judged on the "
                           f"test split and nothing was registered.")
        return result
    if best is None:
        result.sentence = (f"No candidate could be judged ({counted(result.rejected, 'reply', 'replies')} "
                           "rejected, each with its reason in the align record: 'annotator "
                           f"align-log {session.where}'); nothing was registered.")
        return result
    result.best = best
    session.update_align_run(state.run_id, best_candidate=best.candidate_id)
    if best.key() <= incumbent.key():
        # The test split is looked at once: never spent on a candidate validation already
        # ranked no better than the judge (it would only spend the look, or win by chance).
        result.outcome = "no better candidate"
        result.sentence = (f"No candidate beat '{options.judge}' on validation (the best: "
                           f"kappa {_figure(best.kappa)} against {_figure(incumbent.kappa)}); "
                           "nothing was judged on the test split and nothing was registered.")
        return result
    step = state.judging_step(prepared.test)
    if not state.affordable(step):
        result.outcome = "stopped"
        result.sentence = (f"Stopped: the budget ran out before the test split could be judged "
                           f"({_spent(state)}); nothing was registered.")
        return result
    try:
        state.charge(await state.judge(best.name, best.prompt, prepared.test),
                     best.candidate_id)
    except optimizer.CandidateError as error:
        result.outcome = "stopped"
        result.sentence = (f"Stopped: the best candidate could not be judged on the test split "
                           f"({error}); nothing was registered.")
        return result
    _compare(state, result, best)
    return result


MIN_TEST_GOLDENS = 10
"""Test goldens align needs: below them the keep rule almost never keeps a better candidate
(one better by 0.1 kappa: about 1% at 5 test goldens, 7% at 10; benchmarks/coverage.py)."""


def _compare(state: _Run, result: AlignResult, best: Scored) -> None:
    """The paired test on the test split, and what it decides: keep only when the kappa
    difference's interval is above 0 and the candidate is right significantly more often
    (cluster-adjusted McNemar): each alone kept a candidate no better than the judge 2.5-3.3%
    of the time at 10-40 test goldens, both together 1.7-2.5% (benchmarks/coverage.py)."""
    from annotator.report.leaderboard import build_leaderboard

    session, options, prepared = state.session, state.options, state.prepared
    board = build_leaderboard(session, annotator=options.annotator,
                              judges=[options.judge, best.name], split="test",
                              resamples=options.resamples, seed=options.seed)
    pair = board.pairs[0]
    sign = 1.0 if pair.first == best.name else -1.0
    value = pair.kappa_difference.value
    interval = pair.kappa_difference.interval
    difference = None if value is None else sign * value
    low, high = ((min(sign * interval[0], sign * interval[1]),
                  max(sign * interval[0], sign * interval[1])) if interval is not None
                 else (None, None))
    kappas = {row.judge: row.stats["cohen_kappa"].value for row in board.judges}
    result.test = {"chunks": pair.chunks, "kappa": kappas.get(best.name),
                   "incumbent_kappa": kappas.get(options.judge), "difference": difference,
                   "low": low, "high": high}
    session.update_align_run(state.run_id, test_chunks=pair.chunks,
                             test_kappa=kappas.get(best.name),
                             incumbent_test_kappa=kappas.get(options.judge),
                             test_difference=difference, test_low=low, test_high=high)
    figures = (f"kappa {_figure(kappas.get(best.name))} against {_figure(kappas.get(options.judge))}"
               f" on {counted(pair.chunks, 'test chunk')}, a difference of "
               f"{_signed(difference)} (95% CI {_signed(low)} to {_signed(high)})")
    more_often_right = pair.better == best.name
    if low is not None and low > 0 and more_often_right:
        path = options.out_dir / f"{prepared.target}.toml"
        aligned = replace(best.prompt, aligned_on=prepared.settings.model)
        from annotator.judge import prompt_file

        # The file's path is recorded before it is written, and the judge registered with
        # the record in one transaction: a run killed between them leaves what the next run
        # recognises and removes (clear_stopped_runs), never an orphan or a judge unrecorded.
        session.update_align_run(state.run_id, prompt_path=str(path))
        _write_new(path, prompt_file.dump(aligned))
        with session.transaction():
            session.rename_judge(best.name, prepared.target)
            session.update_align_run(state.run_id, registered_as=prepared.target)
        state.temporary.discard(best.name)
        result.outcome, result.registered_as, result.prompt_path = "kept", prepared.target, path
        result.sentence = (f"Kept: the best candidate beats '{options.judge}' on the test split, "
                           f"{figures}. Registered as judge '{prepared.target}', its prompt "
                           f"written to {path}.")
        return
    result.outcome = "worse" if high is not None and high < 0 else "not distinguishable"
    why = ("worse than the incumbent" if result.outcome == "worse" else
           "not distinguishable from the incumbent: the interval holds 0, so the test split "
           "cannot tell them apart (more labelled test goldens narrow it)"
           if low is None or low <= 0 else
           "not distinguishable from the incumbent: its kappa is higher, but it is not right "
           f"significantly more often (cluster-adjusted McNemar p = {_figure(pair.p.value)}), "
           "and a candidate is kept only when both say so")
    result.sentence = (f"Nothing kept: the best candidate is {why}; {figures}. "
                       f"'{options.judge}' stays as it is.")


def _write_new(path: Path, text: str) -> None:
    """Write a file that must not exist yet, whole or not at all."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
        os.link(temporary, path)  # fails if a file took the name meanwhile
    finally:
        os.unlink(temporary)


def _figure(value: float | None) -> str:
    return "undefined" if value is None else f"{value:.3f}"


def _signed(value: float | None) -> str:
    return "undefined" if value is None else f"{value:+.3f}"


def _spent(state: _Run) -> str:
    spent = state.spent
    return (f"{counted(spent.calls, 'call')} made"
            + (f", ${spent.cost:.4f} spent" if state.priced else ""))

"""The progress-timed soak: clients that each run an actor of two providers (at the emulator's one address, with one
key), on one SQLite ledger or as three hosts on one PostgreSQL ledger, killed with SIGKILL right after the API
committed a create of theirs, while they poll, right after their first stored answer, and at random (`_progress.py`);
then a finishing client per group of keys, and the audit through each provider's own SDK: every request created once
and at its own provider, every key answered with the reply to its own question, no batch left outstanding.

Each round is drawn from `random.Random(f"{seed}:{round}:{variant}")`: a failing round names the seed and round that
replay it (`robot --variable SEED:... --variable FIRST_ROUND:... --variable ROUNDS:1`). One emulator serves every
round (reset between rounds); each round has a ledger of its own (a SQLite file, or a new PostgreSQL database).
"""

from __future__ import annotations

import random
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from robot.api import logger
from robot.api.deco import keyword, library
from robot.libraries.BuiltIn import BuiltIn

from _crash_providers import _PROVIDERS, API_KEY
from _crash_state import _answers, _few, _natural
from _custom_ids import key_of, keys_created
from _progress import KINDS, Kill, Stats, Watch, draw_plan, stored_results, tally
from _sdk_audits import AUDITS, created_ids
from SoakLibrary import SoakLibrary, Totals

# Seconds a client may take before it counts as a hang (its batches take about a second each; a loaded machine
# takes 10 to 20 s to start a client of two providers' SDKs).
_FINISH_TIMEOUT = 180.0
_END_TIMEOUT = 60.0
_HOST_LEASE = 3.0
"""The hosts' lease: how long the others leave a killed host's batches before they take them over."""
_DEFAULT_ROUNDS = {"sqlite": 2, "postgres": 1}
"""The rounds of a run not given ROUNDS (the `robot` and `postgres` sessions'): each test about 2 minutes on a loaded
2-core machine (1 min 43 s for two rounds of one process; one round of three hosts takes 70 s, two 2 min 32 s)."""
_NEVER_LANDED = 4
"""A kind of kill drawn this many times in a run without landing once fails the run: its moment is no longer
recognised, and the soak would go on killing at other moments only."""


@dataclass
class _Totals(Totals):
    """The random-kill soak's, and what kills timed by progress and two providers add."""

    lives: int = 0
    outran: int = 0
    left_ended: int = 0
    """Kills that left a batch ended with every result stored, not said collected (the `after-results` shape)."""
    wrong_provider: int = 0
    planned: list[Kill] = field(default_factory=list[Kill])


@dataclass(frozen=True)
class _Round:
    """What one round asks: its groups of keys (a client each, per life), each provider's keys and questions. Each
    life asks its group's keys of the lives before it and as many again (`own`, `shared` more per provider): the
    clients of every life have work of their own to be killed in, beside what the dead left them."""

    groups: list[str]
    providers: list[str]
    own: int
    shared_prefix: str | None
    shared: int
    size: int
    lives: int

    def keys(self, group: str) -> dict[str, tuple[str, str]]:
        """The keys a group's finishing client asks (those of every life): key -> (provider, question), as
        `crash_client.py` names them."""
        prefixes = [(group, self.own * self.lives)]
        if self.shared_prefix:
            prefixes.append((self.shared_prefix, self.shared * self.lives))
        return {
            f"{prefix}-{provider}-{i}": (provider, f"question {i} to {provider}")
            for provider in self.providers
            for prefix, count in prefixes
            for i in range(1, count + 1)
        }

    def every_key(self) -> dict[str, tuple[str, str]]:
        found: dict[str, tuple[str, str]] = {}
        for group in self.groups:
            found.update(self.keys(group))
        return found


@library(scope="SUITE", auto_keywords=False)
class ProgressSoakLibrary(SoakLibrary):
    """`Run Progress Soak` drives the rounds; the crash suite's keywords start the emulator and the clients."""

    def __init__(self) -> None:
        super().__init__()
        self._progress = self._totals = _Totals()
        """The run's totals: also the random-kill soak's `_totals`, which its helpers count into."""

    @keyword("Run Progress Soak")
    def run_progress_soak(
        self,
        rounds: int | None,
        seed: str,
        first_round: int = 1,
        providers: str = "anthropic,mistral",
        processes: int = 1,
        store: str = "sqlite",
    ) -> dict[str, Any]:
        """`rounds` rounds from `first_round`, each with `processes` clients at once (each an actor of every one of
        `providers`) on one ledger: a SQLite file, or (`store=postgres`) a PostgreSQL database, where each client is
        a host of its own and the hosts share keys. Fails at the first round that double-created a request, created
        one at the wrong provider, lost an answer, hung or left a batch outstanding, naming the seed and round that
        replay it; and if a kind of kill never landed in the whole run (drawn at least `_NEVER_LANDED` times).
        `rounds` None: `_DEFAULT_ROUNDS` of `store`'s (a round of three hosts costs about twice one process's)."""
        rounds = _DEFAULT_ROUNDS[store] if rounds is None else int(rounds)
        names = providers.split(",")
        for provider in names:
            self.use_provider(provider)  # (checks the name)
        variant = f"{providers}:{processes}:{store}"
        totals = self._progress = self._totals = _Totals()
        started = time.monotonic()
        for number in range(int(first_round), int(first_round) + rounds):
            self.reset_emulator()
            rng = random.Random(f"{seed}:{number}:{variant}")
            kills: list[Kill] = []
            try:
                self._round(rng, number, names, int(processes), store, kills)
            except AssertionError as exc:
                more = f"\nIts kills: {_report(kills)}"
                raise self._failed("Progress soak", number, seed, variant, exc, more) from None
            finally:
                totals.planned.extend(kills)
                self.stop_clients()
            totals.rounds += 1
        totals.seconds = time.monotonic() - started
        counts = tally(totals.planned)
        summary = {k: v for k, v in vars(totals).items() if k not in ("planned", "failures")}
        summary["planned kills"] = counts
        logger.info(f"Progress soak of {rounds} round(s), seed {seed!r}, {variant}: {summary}", also_console=True)
        never = [k for k in KINDS if sum(counts[k].values()) >= _NEVER_LANDED and not counts[k]["landed"]]
        if never:
            raise AssertionError(f"Kills of kind {', '.join(never)} were drawn but never landed: {counts}")
        return summary

    # ------------------------------------------------------------------------------------------------ a round

    def _round(
        self, rng: random.Random, number: int, providers: list[str], processes: int, store: str, kills: list[Kill]
    ) -> None:
        totals = self._progress
        hosts = store == "postgres"
        size = rng.randint(4, 16) if hosts else rng.randint(4, 25)
        prefix = f"s{number}"
        round_ = _Round(
            groups=[f"{prefix}{'h' if hosts else 'p'}{chr(ord('a') + i)}" for i in range(processes)],
            providers=providers,
            own=size if hosts else size * 2,  # batches of the same size: same-size intents overlap
            shared_prefix=f"{prefix}sh" if hosts else None,
            shared=size if hosts else 0,
            size=size,
            lives=rng.choice((1, 1, 2) if hosts else (1, 1, 2, 3)),  # a life of three hosts costs three
        )
        ledger = self._database() if hosts else self.new_ledger()
        if rng.random() < 0.5:  # half the rounds stream results slowly, as the random-kill soak's
            for provider in providers:
                self.arm_fault(_PROVIDERS[provider].results_route, "slow", seconds=0.002)
        lives = round_.lives
        for life in range(1, lives + 1):
            for provider in providers:
                self._arm_creates(rng, provider)
            plans = [draw_plan(rng) if processes == 1 or rng.random() < 0.7 else None for _ in round_.groups]
            if not any(plans):
                plans[0] = draw_plan(rng)
            baseline = stored_results(ledger) if self._emulator_holds_batches(providers) else {}
            names = self._start_all(round_, ledger, hosts, f"{prefix}-life{life}", life, planned=plans)
            stats = {p: Stats(_PROVIDERS[p].batches_stat, _PROVIDERS[p].created_stat) for p in providers}
            clients = [(name, self._process_client(name), plan) for name, plan in zip(names, plans, strict=True)]
            landed = Watch(self._require_base_url(), ledger, stats, clients, baseline).run(_FINISH_TIMEOUT)
            kills.extend(landed)
            killed = {k.client for k in landed if k.outcome != "outran"}
            for name in names:
                code = self._wait_or_hang(name, _FINISH_TIMEOUT)
                if name not in killed and code != 0:
                    self.client_should_have_succeeded(name)  # nobody killed it: it must have answered every call
            totals.lives += 1
            totals.kills += len(killed)
            totals.outran += sum(k.outcome == "outran" for k in landed)
            totals.left_ended += sum(k.left_ended for k in landed)
            logger.info(f"Round {number}, life {life} of {lives}: {_report(landed)}")
        for provider in providers:
            self._arm_creates(rng, provider)
        finishers = self._start_all(round_, ledger, hosts, f"{prefix}-finish", lives)
        for name in finishers:
            self._wait_or_hang(name, _FINISH_TIMEOUT)
        # What the APIs hold first: a call that failed because its request went to another provider is said so.
        held = self._audit(round_)
        for name, group in zip(finishers, round_.groups, strict=True):
            self._answered(name, round_.keys(group), held)
            self.client_should_have_succeeded(name)
        self.every_batch_should_be_collected(ledger)
        self.every_result_should_be_stored_once(ledger)
        logger.info(f"Round {number}: {len(kills)} kill(s) planned: {_report(kills)}")

    def _start_all(
        self, round_: _Round, ledger: str, hosts: bool, name: str, life: int, planned: Sequence[object] = ()
    ) -> list[str]:
        """A client for each group, started together (a barrier): on PostgreSQL each a host of its own, known to the
        others by its lease alone, and the same host again in every life. A group with a kill `planned` (its plan not
        None) runs unmeasured by coverage (`UNMEASURED`: SIGKILL leaves no coverage data to write; one that outruns
        its kill ends as a finisher does, which is measured)."""
        barrier = self.new_barrier()
        names: list[str] = []
        plans = list(planned) or [None] * len(round_.groups)
        for group, plan in zip(round_.groups, plans, strict=True):
            self._progress.clients += 1
            names.append(
                self.start_client(
                    group,
                    round_.own * life,
                    ledger,
                    name=f"{name}-{group}",
                    barrier=barrier,
                    parties=len(round_.groups),
                    max_batch_requests=round_.size,
                    reconcile_grace=5.0,
                    host_id=f"host-{group[-1]}" if hosts else None,
                    lease_seconds=_HOST_LEASE if hosts else None,
                    shared_prefix=round_.shared_prefix,
                    shared=round_.shared * life,
                    providers=",".join(round_.providers),
                    measured=plan is None,
                )
            )
        self.wait_for_barrier(barrier, len(names), timeout=_FINISH_TIMEOUT)
        return names

    def _database(self) -> str:
        """A new database of the suite's PostgreSQL cluster (`PostgresLibrary`, which the suite imports)."""
        postgres: Any = BuiltIn().get_library_instance("PostgresLibrary")
        return str(postgres.create_postgresql_database())

    def _emulator_holds_batches(self, providers: list[str]) -> bool:
        stats = self.emulator_stats()
        return any(int(stats.get(_PROVIDERS[p].batches_stat, 0)) > 0 for p in providers)

    # ---------------------------------------------------------------------------------------------- the audit

    def _audit(self, round_: _Round) -> dict[str, dict[str, list[str]]]:
        """Each provider's batches through its own SDK (batch id -> custom ids): every key of a provider created
        exactly once, at that provider and no other; then the emulator's own counts agree. Returns the batches."""
        expected = round_.every_key()
        held = {p: AUDITS[p](self._require_base_url(), API_KEY, _END_TIMEOUT) for p in round_.providers}
        stats = self.emulator_stats()
        problems: list[str] = []
        for provider, batches in held.items():
            self._progress.batches += len(batches)
            seen = Counter[str]()
            for custom_id, times in created_ids(batches).items():
                seen[key_of(custom_id)] += times
            mine = {key for key, (p, _) in expected.items() if p == provider}
            twice = [f"{k}={seen[k]}" for k in sorted((k for k in mine if seen[k] > 1), key=_natural)]
            missing = sorted(mine - set(seen), key=_natural)
            elsewhere = sorted(f"{k} (of {expected[k][0]})" for k in seen if k in expected and k not in mine)
            strangers = sorted(k for k in seen if k not in expected)
            created = dict(keys_created(stats[_PROVIDERS[provider].created_stat]))
            if twice:
                self._progress.double_creates += len(twice)
                problems.append(f"{provider}: created more than once (its SDK's results): {_few(twice)}")
            if elsewhere:
                self._progress.wrong_provider += len(elsewhere)
                problems.append(f"{provider}: holds other providers' requests: {_few(elsewhere)}")
            if missing:
                problems.append(f"{provider}: never created: {_few(missing)}")
            if strangers:
                problems.append(f"{provider}: unexpected custom ids: {_few(strangers)}")
            if not (twice or elsewhere or missing) and created != dict.fromkeys(mine, 1):
                problems.append(f"{provider}: the emulator's created custom ids disagree with its SDK: {created}")
        self._progress.requests += len(expected)
        if problems:
            raise AssertionError("; ".join(problems))
        return held

    def _answered(self, name: str, keys: dict[str, tuple[str, str]], held: dict[str, dict[str, list[str]]]) -> None:
        """The client answered each of its keys once, with the emulator's reply to that key's own question, from a
        batch of its own provider that the provider's SDK lists as holding that key's custom id."""
        lines = _answers(self._client(name))
        counted = Counter(str(line.get("key")) for line in lines)
        by_key = {str(line.get("key")): line for line in lines}
        problems: list[str] = []
        repeated = sorted((k for k, n in counted.items() if n > 1), key=_natural)
        missing = sorted(set(keys) - set(counted), key=_natural)
        unexpected = sorted(set(counted) - set(keys), key=_natural)
        wrong: list[str] = []
        for key, (provider, question) in sorted(keys.items(), key=lambda item: _natural(item[0])):
            line = by_key.get(key)
            if line is None:
                continue
            custom_id, batch_id = str(line.get("custom_id")), str(line.get("batch_id"))
            if "error" in line:
                wrong.append(f"{key}: {line['error']}: {line.get('message')}")
            elif line.get("provider") != provider or line.get("prompt") != question:
                wrong.append(f"{key}: asked {line.get('prompt')!r} of {line.get('provider')}")
            elif not str(line.get("text", "")).startswith(f'Emulated reply to "{question}":'):
                wrong.append(f"{key}: text {line.get('text')!r}")
            elif key_of(custom_id) != key or custom_id not in held[provider].get(batch_id, ()):
                wrong.append(f"{key}: custom id {custom_id} from {batch_id}, which {provider}'s SDK does not list so")
        for label, found in (("more than once", repeated), ("not answered", missing), ("unexpected", unexpected)):
            if found:
                problems.append(f"{len(found)} {label}: {_few(found)}")
        if wrong:
            problems.append(f"{len(wrong)} wrong answer(s): {_few(wrong)}")
        if problems:
            self._progress.lost_answers += len(missing)
            raise AssertionError(f"The answers of {name} are not right: " + "; ".join(problems))

    def _arm_creates(
        self, rng: random.Random, provider: str | None = None, delays: tuple[float, float] = (0.3, 1.2)
    ) -> None:
        """As the random-kill soak's, with the creates answered 0.3 to 1.2 s after they commit: long enough for a
        loaded machine's test process to see the commit, and the ledger without its id, before it kills."""
        super()._arm_creates(rng, provider, delays)


def _report(kills: list[Kill]) -> str:
    """Where each planned kill landed, one a line."""
    return "".join(f"\n  {kill}" for kill in kills) or " none"


__all__ = ["ProgressSoakLibrary"]

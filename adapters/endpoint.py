"""Any SQS-compatible endpoint on a real clock: an emulator at `--endpoint-url`, or real AWS without one.

Safety: queue names carry a unique run prefix and every queue a tag, so the suite touches only what it created
and `cleanup` finds leftovers; a request budget stops a run before it costs more than the user allowed; account
ids and queue URLs are redacted from everything it reports; credentials come from boto3's own chain and are
never read, printed or stored by the suite.
"""

from __future__ import annotations

import threading
import time
import uuid
from pathlib import Path
from typing import Any, NamedTuple

import boto3
import botocore.exceptions
from botocore.config import Config

from sqs_conformance.adapters import interrupt
from sqs_conformance.adapters.base import (
    SCAN_MARGIN, RealClock, SharedView, ShiftedClock, Target, TargetError, redact,
)
from sqs_conformance.adapters.scan_sentinel import ScanSentinel
from sqs_conformance.adapters.servers import FakeTime, LocalServer
from sqs_conformance.adapters.sqs_api import CLIENT_CONFIG, UNANSWERED, SqsApiTarget, queue_url_parts, worth_another_try

RUN_TAG = "sqs-conformance-run"
QUEUE_PREFIX = "sqsconf-"
# Public SQS pricing (us-east-1, beyond the free tier), dollars per million requests.
PRICE_PER_MILLION = {"standard": 0.40, "fifo": 0.50}
# Seconds a deadline may show early or late on a real clock. For AWS from docs/evidence.md row 'timing-precision'
# (with 1 s timeouts its deadlines held well inside half a second); emulators are given the same.
DEFAULT_TOLERANCE = {"aws": 0.5, "endpoint": 0.5}


_PROBE_ATTEMPTS = 4
_CLIENTS_MADE = threading.Lock()


class BudgetExhausted(TargetError):
    """The run reached its --max-requests budget."""


# The longest a moved-clock witness moves the clock in one case (a 12-hour ceiling twice over, with room): the
# time-travel probe moves it this far too, and checks the emulator still keeps time.
TIME_TRAVEL_JUMP = 25 * 3600


MOVED_CLOCKS = Path(".sqs-conformance") / "faketime"  # the offset files of the servers the suite moves

# How long after a move of its clock an emulator may take to bring back a message the move released (LocalStack
# scans once a second), before the probe counts it as not following the wall clock.
LAG_LIMIT = 3.0


def settle_for(lags: list[float]) -> float:
    """The real seconds to leave an emulator at the end of each advance (ShiftedClock.settle), from how long it
    took to bring back a released message after a move. Within a tenth of a second: its timers are read on
    demand, no settling. Else it scans periodically, and each lag fell somewhere in its period: the longest lag,
    but at least the shortest period a scanner uses (a second), with a margin for the scan itself."""
    longest = max(lags, default=0.0)
    return 0.0 if longest < 0.1 else max(1.0, longest) + SCAN_MARGIN


class TimeTravelUnsupported(TargetError):
    """The emulator's clock cannot be moved under libfaketime: check it on a real clock instead."""


class RequestBudget:
    """Requests sent, and the most allowed: one budget for all the jobs of a run."""

    def __init__(self, limit: int | None = None) -> None:
        self.limit = limit
        self.spent = 0
        self._lock = threading.Lock()

    def spend(self) -> None:
        with self._lock:
            if self.limit is not None and self.spent >= self.limit:
                raise BudgetExhausted(f"the request budget of {self.limit} is spent (--max-requests)")
            self.spent += 1

    def record(self) -> None:
        """A request that is never refused (the cleanup of what the run created)."""
        with self._lock:
            self.spent += 1


class _Connection(NamedTuple):
    """What a second connection to the same service is made with."""

    endpoint_url: str | None
    region: str | None
    aws_profile: str | None
    local_credentials: bool


class EndpointTarget(SqsApiTarget):
    profiles = frozenset({"sqs-standard", "sqs-fifo"})
    clock: RealClock

    def __init__(self, *, endpoint_url: str | None = None, region: str | None = None,
                 aws_profile: str | None = None, max_requests: int | None = None, tolerance: float | None = None,
                 version: str = "unknown", local_credentials: bool = False, budget: RequestBudget | None = None,
                 session: boto3.Session | None = None, faketime: FakeTime | None = None, fifo: bool = False,
                 name: str | None = None, say=lambda message: None,
                 more_moved: tuple[tuple[str, Path], ...] = (), settle: float | None = None,
                 held: ShiftedClock | None = None) -> None:
        """With `faketime` the server at `endpoint_url` runs under libfaketime reading `faketime.file`: the target's
        clock is moved by writing offsets there, once the time-travel probe (on a queue of the kind the run uses,
        FIFO if `fifo`) has shown that the server follows it. `settle`: that of another server of the same build
        under the same libfaketime, whose whole probe it passed (an emulator's extra server): this one need only
        show that it follows its own file, by one move of 31 s. `more_moved`: more such servers, (URL, file) each,
        that `another_connection` opens one by one (the witnesses are shared out between them). `held`: the clock
        of a connection to a moved server that never moves it (`held_connection`)."""
        kind = "aws" if endpoint_url is None else "endpoint"
        self.faketime = faketime
        self._fifo = fifo
        self._more_moved = list(more_moved)
        self._more_moved_lock = threading.Lock()
        self._connection = _Connection(endpoint_url, region, aws_profile, local_credentials)
        self.run_tag = uuid.uuid4().hex[:10]
        self.budget = budget or RequestBudget(max_requests)
        self._enforce_budget = True
        self._version = version
        self.tolerance = DEFAULT_TOLERANCE[kind] if tolerance is None else tolerance
        try:
            session = session or self._session(aws_profile, region, endpoint_url, local_credentials)
            # A long poll lasts up to 20 s: the read timeout leaves room for it and no more.
            config = CLIENT_CONFIG.merge(Config(connect_timeout=5, read_timeout=25))
            with _CLIENTS_MADE:  # a session is not thread-safe: connections opened at once share one
                client = session.client("sqs", endpoint_url=endpoint_url, config=config)
        except (botocore.exceptions.BotoCoreError, ValueError) as error:
            raise TargetError(f"cannot set up an SQS client: {redact(str(error))}") from None
        clock = held or (RealClock() if faketime is None else ShiftedClock(faketime.shift))
        if held is None:
            clock.epoch_zero += faketime.base if faketime is not None else 0.0  # the server's epoch at its zero
        where = name or (f"aws:{session.region_name}" if endpoint_url is None else f"endpoint:{_host(endpoint_url)}"
                         + (":faketime" if faketime is not None else ""))
        super().__init__(where, client, clock, prefix=f"{QUEUE_PREFIX}{self.run_tag}-",
                         clock_origin_ms=lambda: clock.epoch_zero * 1000, tags={RUN_TAG: self.run_tag})
        client.meta.events.register("before-send.sqs", self._count_request)
        self.session = session
        self._probe()
        self._sentinel: ScanSentinel | None = None
        if isinstance(clock, ShiftedClock) and held is None:
            if settle is None:
                clock.settle = self._check_time_travel(fifo)
            else:  # its scan's period is the build's: a lag measured once may fall anywhere in it
                clock.settle = max(settle, self._check_time_travel(fifo, lag_samples=1, long_jump=False))
            if clock.settle:
                self._sentinel = clock.scan_watch = ScanSentinel(self.client, f"{self.prefix}scan-sentinel",
                                                                 self.tags, self._forget_queue)
                say(f"{self.name}: it brings a released message back up to a second or more after a move of its "
                    f"clock (a periodic scan): each advance ends at its next scan, within {clock.settle:.2f} s of "
                    f"real time")

    @staticmethod
    def _session(aws_profile: str | None, region: str | None, endpoint_url: str | None,
                 local_credentials: bool) -> boto3.Session:
        session = boto3.Session(profile_name=aws_profile, region_name=region or "us-east-1")
        if local_credentials or (endpoint_url is not None and session.get_credentials() is None):
            # An emulator takes any key. Real credentials are left to boto3's chain, never handled here.
            session = boto3.Session(region_name=session.region_name, aws_access_key_id="testing",
                                    aws_secret_access_key="testing")
        return session

    def version(self) -> str:
        return self._version

    def another_connection(self) -> EndpointTarget | None:
        """A second client of the same service for a concurrent job: its own queues, the same budget, the same
        name in the trace. It owns nothing it did not create (a server stays with this target)."""
        connection, faketime = self._connection, None
        if self.faketime is not None:
            # moving the server's clock would move it for every client: another connection is another server the
            # user started on a clock of its own, probed as this one was, while there are any
            with self._more_moved_lock:
                if not self._more_moved:
                    return None
                url, file = self._more_moved.pop(0)
            connection, faketime = connection._replace(endpoint_url=url), FakeTime.given(file)
        # The same session: its loaded service model makes a new client ten times cheaper (clients are made here,
        # one at a time; each is then used by one job).
        other = EndpointTarget(**connection._asdict(), tolerance=self.tolerance, version=self._version,
                               budget=self.budget, session=self.session, faketime=faketime, fifo=self._fifo)
        other.name = self.name
        return other

    def held_connection(self) -> EndpointTarget | None:
        if not isinstance(self.clock, ShiftedClock):
            return None
        other = EndpointTarget(**self._connection._asdict(), tolerance=self.tolerance, version=self._version,
                               budget=self.budget, session=self.session, fifo=self._fifo, held=self.clock.held())
        other.name = self.name
        return other

    def shared_connection(self) -> Target:
        """Another consumer of this target's queues: its boto3 client serves many threads at once."""
        return SharedView(self)

    def requests_billed(self) -> int:
        return self.budget.spent

    def cost_estimate(self, fifo: bool) -> float:
        return self.requests_billed() / 1e6 * PRICE_PER_MILLION["fifo" if fifo else "standard"]

    def close(self) -> None:
        self._enforce_budget = False  # deleting what the run created is never refused for budget
        if self._sentinel is not None:
            self._sentinel.close()
        super().close()

    def _count_request(self, **_: Any) -> None:
        self.budget.spend() if self._enforce_budget else self.budget.record()

    def _probe(self) -> None:
        """One cheap request up front, so that a wrong endpoint or missing credentials fail in one line."""
        try:
            for attempt in range(_PROBE_ATTEMPTS):  # one lost or failed answer is not yet a dead endpoint
                try:
                    self.client.list_queues(QueueNamePrefix=self.prefix, MaxResults=1)
                    return
                except (botocore.exceptions.ClientError, *UNANSWERED) as error:
                    if not worth_another_try(error) or attempt == _PROBE_ATTEMPTS - 1:
                        raise
                    interrupt.sleep(0.2 * 2 ** attempt)
        except botocore.exceptions.NoCredentialsError:
            raise TargetError("no AWS credentials found (boto3 looks in the environment, ~/.aws and --aws-profile)"
                              ) from None
        except UNANSWERED as error:
            raise TargetError(f"cannot reach {self.name}: {redact(str(error))}") from None
        except botocore.exceptions.ClientError as error:
            code = error.response.get("Error", {}).get("Code", "an error")
            raise TargetError(f"{self.name} refused the first request with {code}") from None
        except botocore.exceptions.BotoCoreError as error:
            raise TargetError(f"{self.name}: {redact(str(error))}") from None


    def _check_time_travel(self, fifo: bool, lag_samples: int = 2, long_jump: bool = True) -> float:
        """Moving the clock must bring back a hidden message, and go on doing so after a jump as long as the
        longest a moved-clock witness makes, with long polls still lasting their wait. An emulator whose timers
        run on the monotonic clock (which libfaketime leaves alone), or whose sleeps break after hours of jump,
        would otherwise show divergences that are not its own. Probed on a queue of the kind the run will use:
        an emulator may bring a FIFO queue's messages back by other timers than a standard queue's (LocalStack).
        Returns the clock's `settle`: from how long after each move the message took to come back. One probe for
        every moved clock: an emulator the suite starts (`:faketime`) and a server a user started (--faketime-file).
        `lag_samples`: moves of 31 s before the long jump (the lag after it is sampled whatever the number);
        without `long_jump`, those moves alone (a server of a build whose long jump another server passed).
        """
        client, url = self.client, None
        kind = ({"QueueName": f"{self.prefix}time-travel.fifo",
                 "Attributes": {"FifoQueue": "true", "ContentBasedDeduplication": "true"}} if fifo
                else {"QueueName": f"{self.prefix}time-travel"})
        try:
            url = client.create_queue(**kind, tags=self.tags)["QueueUrl"]
            client.send_message(QueueUrl=url, MessageBody="time travel probe",
                                **({"MessageGroupId": "probe"} if fifo else {}))
            lags: list[float] = []
            for _ in range(lag_samples):  # samples of the lag before the long jump
                lag = self._lag_after_a_move(url)
                if lag is None:
                    how, unseen, instead = self._moved_words()
                    raise TimeTravelUnsupported(
                        f"{self.name}: a message hidden for 30 s stayed hidden after the clock moved 31 s {how} "
                        f"({unseen}): {instead}")
                lags.append(lag)
            if long_jump:
                lags.append(self._lag_after_the_long_jump(url))
            return settle_for(lags)
        except (botocore.exceptions.ClientError, *UNANSWERED) as error:
            raise TargetError(f"{self.name}: the time-travel probe failed: {redact(str(error))}") from None
        finally:
            if url is not None:
                self._forget_queue(url)

    def _lag_after_the_long_jump(self, url: str) -> float:
        """Jump TIME_TRAVEL_JUMP: the message must be receivable, a 1 s long poll must last about its second, and a
        move of 31 s must still bring the message back; the real seconds that took."""
        client = self.client
        self.clock.advance(TIME_TRAVEL_JUMP)
        taken = client.receive_message(QueueUrl=url, VisibilityTimeout=30).get("Messages")
        started = time.monotonic()
        client.receive_message(QueueUrl=url, WaitTimeSeconds=1)  # nothing to return: it waits its second
        polled = time.monotonic() - started
        wrong = [] if taken else ["the message was not receivable"]
        wrong += [] if 0.5 <= polled <= 5 else [f"a 1 s long poll took {polled:.1f} s"]
        if not wrong:
            lag = self._lag_after_a_move(url, received=True)
            if lag is not None:
                return lag
            wrong.append("a message hidden for 30 s stayed hidden after 31 s more")
        how, _, instead = self._moved_words()
        raise TimeTravelUnsupported(
            f"{self.name}: after the clock moved {TIME_TRAVEL_JUMP / 3600:g} h {how} it no longer keeps "
            f"time ({'; '.join(wrong)}): {instead}")

    def _lag_after_a_move(self, url: str, received: bool = False) -> float | None:
        """Receive the message for 30 s (unless `received`), move the clock 31 s: the real seconds until a receive
        that finds it again was sent (None: not within LAG_LIMIT)."""
        client = self.client
        if not received and not client.receive_message(QueueUrl=url, VisibilityTimeout=30).get("Messages"):
            raise TargetError(f"{self.name}: the time-travel probe message was not received")
        self.clock.advance(31)
        moved = time.monotonic()
        while True:
            asked = time.monotonic()  # counted to the request that found it, not its answer: a slow server lags none
            if client.receive_message(QueueUrl=url, VisibilityTimeout=0).get("Messages"):
                return asked - moved
            if time.monotonic() - moved > LAG_LIMIT:
                return None
            time.sleep(0.1)

    def _forget_queue(self, url: str) -> None:
        try:
            self.client.delete_queue(QueueUrl=url)
        except (botocore.exceptions.ClientError, *UNANSWERED):
            pass  # named and tagged as the run's: `cleanup` finds it (an emulator's queues go when it stops)

    def _moved_words(self) -> tuple[str, str, str]:
        """How the probe's refusals say the clock was moved, why a move may go unseen, and what to do instead."""
        file = self.faketime.file if self.faketime is not None else "?"
        return (f"through {file}", f"the server does not read that file, started otherwise than "
                                   f"`sqs-conformance faketime-env {file}` prints, or its timers do not follow the "
                                   f"wall clock",
                "check it on a real clock: leave out --faketime-file")


def _host(url: str) -> str:
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    if not parts.scheme or not parts.netloc:
        raise TargetError(f"not an endpoint URL: {url!r} (expected e.g. http://127.0.0.1:4566)")
    return parts.netloc


class EmulatorTarget(EndpointTarget):
    """An emulator the suite installs, starts on loopback and stops at close, checked through the endpoint adapter.
    With `time_travel` it runs under libfaketime: advancing its clock is instant, so the 12-hour ceiling and long
    timeouts are checked in seconds, while requests are still judged in their real-time windows. `spares`: on a
    moved clock, that many more servers started as soon as this one is up, while it is probed, for
    `another_connection` (a moved clock's witnesses want a dozen, and a dozen take seconds to start)."""

    def __init__(self, emulator_name: str = "moto-server", *, max_requests: int | None = None,
                 tolerance: float | None = None, time_travel: bool = False, fifo: bool = False,
                 budget: RequestBudget | None = None, session: boto3.Session | None = None,
                 say=lambda message: None, settle: float | None = None, spares: int = 0,
                 started: tuple[LocalServer, FakeTime] | None = None) -> None:
        """`started`: a server already up under libfaketime, with the clock it reads (another's spare)."""
        from sqs_conformance.adapters import emulators

        emu = emulators.emulator(emulator_name)
        self._started = (emulator_name, time_travel, fifo)
        self.server: LocalServer | None = None
        self._spares: emulators.MovedServersStarting | None = None
        faketime = started[1] if started is not None else FakeTime(MOVED_CLOCKS) if time_travel else None
        self.faketime = faketime  # removed with the server, also where it failed to start
        try:
            self.server = started[0] if started is not None else emulators.start(emu, faketime=faketime, say=say)
            if time_travel and spares:
                self._spares = emulators.MovedServersStarting(emu, spares, MOVED_CLOCKS)
            super().__init__(endpoint_url=self.server.url, max_requests=max_requests, tolerance=tolerance,
                             version=emulators.installed_version(emu), local_credentials=True, budget=budget,
                             session=session, faketime=faketime, fifo=fifo,
                             name=emu.name + (":faketime" if time_travel else ""), say=say,
                             settle=settle)
        except BaseException:
            self._stop_server()
            raise

    def another_connection(self) -> EndpointTarget | None:
        """On a real clock another client of this server. On a moved clock, where a move would move the server for
        every client, another server of the same emulator on a clock of its own (a spare while any is left), under
        the same request budget; it stops when that connection is closed."""
        if self.faketime is None:
            return super().another_connection()
        emulator_name, _, fifo = self._started
        started = self._spares.take() if self._spares is not None else None
        # The same build under the same libfaketime as this one, whose whole probe it passed: one move of 31 s shows
        # that it follows its own file, and it settles as this one does (a long jump of its own cost LocalStack
        # most of a second of CPU, catching up its scan once for every second jumped; a lag measured once may fall
        # anywhere in the scan's period)
        settle = self.clock.settle if isinstance(self.clock, ShiftedClock) else None
        return EmulatorTarget(emulator_name, tolerance=self.tolerance, time_travel=True, fifo=fifo,
                              budget=self.budget, session=self.session,  # its service model loaded once
                              settle=settle, started=started)  # stopped by it, also where its probe fails

    def _moved_words(self) -> tuple[str, str, str]:
        return "under libfaketime", "its timers do not follow the wall clock", "check it on a real clock"

    def _stop_server(self) -> None:
        if self._spares is not None:
            self._spares.stop()
        if self.server is not None:
            self.server.stop()
        if self.faketime is not None:
            self.faketime.remove()

    def close(self) -> None:
        try:
            super().close()
        finally:
            self._stop_server()


def leftovers(target: EndpointTarget, older_than: float) -> list[tuple[str, str, float]]:
    """Queues an earlier run left behind: named with the suite's prefix AND tagged by it, older than
    `older_than` seconds. Returns (url, name, age in seconds); a queue lacking either mark is never listed."""
    client = target.client
    found = []
    kwargs: dict[str, Any] = {"QueueNamePrefix": QUEUE_PREFIX, "MaxResults": 1000}
    while True:
        page = client.list_queues(**kwargs)
        for url in page.get("QueueUrls", []):
            _, name = queue_url_parts(url)
            if not name.startswith(QUEUE_PREFIX):
                continue
            try:
                tags = client.list_queue_tags(QueueUrl=url).get("Tags", {})
                created = client.get_queue_attributes(QueueUrl=url, AttributeNames=["CreatedTimestamp"])
            except botocore.exceptions.ClientError:
                continue  # deleted meanwhile, or not ours to read
            if RUN_TAG not in tags or tags[RUN_TAG] == target.run_tag:
                continue
            age = target.clock.epoch_zero - float(created["Attributes"]["CreatedTimestamp"])
            if age >= older_than:
                found.append((url, name, age))
        if not page.get("NextToken"):
            return found
        kwargs["NextToken"] = page["NextToken"]

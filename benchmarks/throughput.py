"""Suite throughput, and how much of it the suite itself costs.

In one process: the suite's steps/s against the model alone and against moto (Hypothesis, the checker model and
the trace included), then the raw calls/s of a plain boto3 loop on moto making the same operation mix (the
same operations in the same order, read back from the suite's trace). The ratio suite ÷ raw is the share of
moto's speed the suite keeps.

    python benchmarks/throughput.py [--examples N] [--profile sqs-standard]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from botocore.exceptions import ClientError  # noqa: E402

from adapters.model_target import ModelTarget  # noqa: E402
from adapters.moto_target import MotoTarget  # noqa: E402
from conformance.runner import run  # noqa: E402
from conformance.trace import read_trace  # noqa: E402
from model.rules import CATALOGUE  # noqa: E402


def suite(target, profile: str, examples: int, out: Path) -> tuple[float, int]:
    start = time.perf_counter()
    try:
        # Every rule tolerated: no case stops at a divergence, so this times generation, not shrinking (nor the
        # witnesses' replay).
        result = run(target, profile, examples=examples, seed=1, out_dir=out, max_rounds=1, coverage_rounds=0,
                     shrink=False, tolerate=frozenset(r.id for r in CATALOGUE), witnesses=False)
    finally:
        target.close()
    return time.perf_counter() - start, result.steps


def raw_loop(operations: list[str], fifo: bool) -> float:
    """The same operations with plain boto3 calls on moto, each on live messages where it can be."""
    moto = MotoTarget()
    client = moto.client
    try:
        start = time.perf_counter()
        attributes = {"FifoQueue": "true", "ContentBasedDeduplication": "true"} if fifo else {}
        url = client.create_queue(QueueName="raw" + (".fifo" if fifo else ""), Attributes=attributes)["QueueUrl"]
        handles: list[str] = ["not-a-receipt-handle"]
        group = {"MessageGroupId": "g"} if fifo else {}
        for i, name in enumerate(operations):
            if name == "SendMessage":
                client.send_message(QueueUrl=url, MessageBody=f"m{i}", **group)
            elif name == "ReceiveMessage":
                reply = client.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=0,
                                               MessageSystemAttributeNames=["All"])
                handles += [m["ReceiptHandle"] for m in reply.get("Messages", [])]
            elif name == "ChangeMessageVisibility":
                _quietly(client.change_message_visibility, QueueUrl=url, ReceiptHandle=handles[-1],
                         VisibilityTimeout=30)
            elif name == "DeleteMessage":
                _quietly(client.delete_message, QueueUrl=url, ReceiptHandle=handles[-1])
            elif name == "ChangeMessageVisibilityBatch":
                _quietly(client.change_message_visibility_batch, QueueUrl=url, Entries=[
                    {"Id": "a", "ReceiptHandle": handles[-1], "VisibilityTimeout": 30}])
            elif name == "DeleteMessageBatch":
                _quietly(client.delete_message_batch, QueueUrl=url, Entries=[{"Id": "a", "ReceiptHandle": handles[-1]}])
            elif name == "GetQueueAttributes":
                client.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])
            elif name == "SetQueueAttributes":
                client.set_queue_attributes(QueueUrl=url, Attributes={"VisibilityTimeout": "30"})
            elif name == "PurgeQueue":
                client.purge_queue(QueueUrl=url)
            elif name == "CreateQueue":
                client.create_queue(QueueName=f"raw{i}" + (".fifo" if fifo else ""), Attributes=attributes)
        return time.perf_counter() - start
    finally:
        moto.close()


def _quietly(call, **kwargs) -> None:
    try:
        call(**kwargs)
    except ClientError:
        pass  # a stale handle is part of the mix: its error costs what it costs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=20)
    parser.add_argument("--profile", default="sqs-standard")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        seconds, steps = suite(ModelTarget(args.profile), args.profile, args.examples, Path(tmp) / "model")
        print(f"suite against the model: {steps / seconds:9,.0f} steps/s  ({steps:,} steps in {seconds:.1f} s)")
        seconds, steps = suite(MotoTarget(), args.profile, args.examples, Path(tmp) / "moto")
        suite_rate = steps / seconds
        print(f"suite against moto:      {suite_rate:9,.0f} steps/s  ({steps:,} steps in {seconds:.1f} s)")
        trace = Path(tmp) / "moto" / "trace.jsonl"
        operations = [record["operation"].__class__.__name__ for record in read_trace(trace)]
        mix = Counter(operations)
        raw_seconds = raw_loop(operations, args.profile == "sqs-fifo")
        raw_rate = len(operations) / raw_seconds
        print(f"plain boto3 on moto:     {raw_rate:9,.0f} calls/s  ({len(operations):,} calls, same mix: "
              + ", ".join(f"{k} {v}" for k, v in mix.most_common()) + ")")
        print(f"suite steps/s / raw calls/s = {suite_rate / raw_rate:.2f}   "
              f"(the suite's own cost: {1000 / suite_rate - 1000 / raw_rate:.2f} ms a step)")


if __name__ == "__main__":
    main()

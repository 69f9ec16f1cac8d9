"""The report as a browser shows it: headless Chromium renders report.html to a PNG, which must hold the pictures
(a page whose markup breaks the browser's parse renders as a few labels and a black box). Set
SQS_CONFORMANCE_SCREENSHOT=FILE.png to keep the picture and look at it."""

import os
import shutil
import subprocess

import pytest
from PIL import Image

from sqs_conformance.reports import job
from tests.reports.conftest import step
from tests.reports.test_pipeline import first_run, write

pytestmark = pytest.mark.xdist_group("spark")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")


@pytest.mark.skipif(CHROMIUM is None, reason="no Chromium on this machine (.ci/run installs Debian's chromium)")
def test_chromium_draws_the_timeline_of_a_divergence(spark, tmp_path):
    case = [step("r9", 1, 0, op="CreateQueue", response="Ok", rules=["VIS-DEFAULT"], views={}),
            step("r9", 1, 1, op="SendMessage", response="SendOk", views={"msg-1": [["none", 1.0]]}),
            step("r9", 1, 2, op="ReceiveMessage", response="ReceiveOk", returned=["msg-1"],
                 views={"msg-1": [["receipt", 32.0]]}),
            step("r9", 1, 3, op="ReceiveMessage", response="ReceiveOk", returned=["msg-1"], invoke=10.0,
                 verdict="divergence", divergences=[["RCV-HIDE"]], views={"msg-1": [["receipt", 40.0]]})]
    write(tmp_path / "traces" / "a.jsonl", first_run() + case)
    job.build(spark, [str(tmp_path / "traces")], str(tmp_path / "out"))
    page = tmp_path / "out" / "report.html"
    html = page.read_text()
    divergence = html[html.index("id='div-emu-RCV-HIDE'"):]
    alone = tmp_path / "divergence.html"
    alone.write_text(html[:html.index("<body>") + 6] + "<section " + divergence.split("</section>")[0]
                     + "</section></body></html>")
    png = tmp_path / "divergence.png"
    subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                    "--window-size=900,600", f"--screenshot={png}", alone.as_uri()],
                   check=True, capture_output=True, timeout=120)
    if os.environ.get("SQS_CONFORMANCE_SCREENSHOT"):
        shutil.copy(png, os.environ["SQS_CONFORMANCE_SCREENSHOT"])
    with Image.open(png) as shot:
        assert shot.size == (900, 600)
        counts = {colour: n for n, colour in shot.convert("RGB").getcolors(maxcolors=900 * 600)}
    # The picture is drawn: the green and grey windows of the message, in proportion, and the red frame of the
    # diverging step, each covering many pixels (a broken parse leaves a few labels and a black box).
    for colour in ("6cc46c", "aaaaaa", "d00000"):
        assert counts.get(tuple(bytes.fromhex(colour)), 0) > 300, colour

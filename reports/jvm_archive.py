"""A class-data-sharing archive for the report's local driver JVM (`report --jvm-archive DIR`).

Spark's driver loads some 18,000 classes from its jars and verifies each one on every start, which is most of a
small report's time. A JVM started with an archive of them maps that work from one file instead. Building it takes
about half a minute and 200 MB, once per Java and PySpark version: worth it where reports are built again and
again on one machine, a loss on a fresh CI machine, hence opt-in. The first report with the option records the
classes its JVM loads and builds the archive when it is done; later ones start with it. A JVM that cannot use an
archive (another Java, other jars, a damaged file) ignores it and starts as it would without; the report then
removes it, and the next one builds it again.
"""

from __future__ import annotations

import hashlib
import subprocess
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from sqs_conformance.reports.class_path import spark_jars

BUILD_TIMEOUT = 600  # seconds; a dump takes about 30 on 2 cores


@dataclass(frozen=True)
class JvmArchive:
    folder: Path
    java: str  # `java -version` as the session's Java prints it: an archive is valid for one Java only

    @cached_property
    def key(self) -> str:
        import pyspark

        jars = sorted(p.name for p in spark_jars().glob("*.jar"))
        return hashlib.sha1("\n".join([self.java, pyspark.__version__, *jars]).encode()).hexdigest()[:12]

    @property
    def archive(self) -> Path:
        return self.folder / f"spark-{self.key}.jsa"

    @property
    def class_list(self) -> Path:
        return self.folder / f"spark-{self.key}.classes"

    def java_options(self) -> str:
        """What the driver JVM starts with: the archive if it was built, else the recording of its classes."""
        if self.archive.exists():
            # auto: an archive this JVM cannot map is ignored; and it is not worth a line of the command's output
            return f"-XX:SharedArchiveFile={self.archive} -Xshare:auto -Xlog:cds=off -Xlog:cds+dynamic=off"
        return f"-XX:DumpLoadedClassList={self.class_list}"

    def after_job(self, spark, say) -> None:
        """Once the session's job is done: build the archive from the classes its JVM recorded, or, if the JVM
        could not use the archive it was given, remove it (the next report records and builds it again)."""
        if self.archive.exists():
            if not _mapped(spark, self.archive):
                self.archive.unlink()
                say(f"--jvm-archive: {self.archive} could not be used (another Java, or damaged): removed, the next"
                    f" report builds it again")
            return
        if not self.class_list.exists():
            say("--jvm-archive: the driver JVM recorded no classes (it was started before, or by spark-submit)")
            return
        say("--jvm-archive: building the driver JVM's class archive (once, about 30 s)")
        failed = self._build(spark)
        say(f"--jvm-archive: {failed}; reports start as before" if failed else
            f"--jvm-archive: {self.archive} built; later reports start with it")

    def _build(self, spark) -> str | None:
        """The archive of the recorded classes, with the session's own Java, class path and modules; why not, if
        it could not be built."""
        system = spark._jvm.java.lang.System  # noqa: SLF001
        java = str(Path(system.getProperty("java.home")) / "bin" / "java")
        arguments = spark._jvm.java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments()  # noqa: SLF001
        modules = [str(a) for a in arguments if str(a).startswith("--add-modules")]
        partial = self.archive.with_suffix(".partial")
        try:
            done = subprocess.run([java, "-Xshare:dump", f"-XX:SharedClassListFile={self.class_list}",
                                   f"-XX:SharedArchiveFile={partial}", "-Xlog:cds=off", "-Xlog:cds+dynamic=off",
                                   "-cp", str(system.getProperty("java.class.path")), *modules],
                                  capture_output=True, text=True, timeout=BUILD_TIMEOUT)
        except (OSError, subprocess.TimeoutExpired) as error:
            partial.unlink(missing_ok=True)
            return f"{java} -Xshare:dump failed: {error}"
        if done.returncode or not partial.exists():
            partial.unlink(missing_ok=True)
            last = (done.stderr or done.stdout).strip().splitlines()
            return f"{java} -Xshare:dump failed: {last[-1] if last else f'exit {done.returncode}'}"
        partial.rename(self.archive)
        self.class_list.unlink(missing_ok=True)
        return None


def _mapped(spark, archive: Path) -> bool:
    """Whether the session's JVM maps its classes from `archive` (it ignores one that does not fit)."""
    jvm = spark._jvm  # noqa: SLF001
    flags = jvm.java.lang.management.ManagementFactory.getPlatformMXBean(
        jvm.java.lang.Class.forName("com.sun.management.HotSpotDiagnosticMXBean"))
    return (str(flags.getVMOption("SharedArchiveFile").getValue()) == str(archive)
            and str(flags.getVMOption("UseSharedSpaces").getValue()) == "true")

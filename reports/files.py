"""Files through Hadoop's file systems, so the job reads and writes local paths, hdfs:// and s3a:// alike."""

from __future__ import annotations

from typing import Any

from pyspark.sql import SparkSession


def _hadoop(spark: SparkSession) -> Any:
    """Hadoop's Java packages, through the session's JVM gateway (PySpark's own way to reach them)."""
    jvm = spark._jvm  # noqa: SLF001
    assert jvm is not None, "a classic (JVM-backed) Spark session"
    return jvm.org.apache.hadoop


def _path(spark: SparkSession, where: str):
    path = _hadoop(spark).fs.Path(where)
    return path, path.getFileSystem(spark._jsc.hadoopConfiguration())  # noqa: SLF001


def file_system(spark: SparkSession, where: str):
    return _path(spark, where)


def exists(spark: SparkSession, where: str) -> bool:
    path, fs = _path(spark, where)
    return bool(fs.exists(path))


def delete(spark: SparkSession, where: str) -> None:
    path, fs = _path(spark, where)
    if fs.exists(path):
        fs.delete(path, True)


def read_text(spark: SparkSession, where: str) -> str | None:
    path, fs = _path(spark, where)
    if not fs.exists(path):
        return None
    stream = fs.open(path)
    try:  # whole, in one call: a call per line costs a round trip to the JVM each
        return bytes(stream.readAllBytes()).decode()
    finally:
        stream.close()


def write_text(spark: SparkSession, where: str, text: str) -> None:
    """Written whole to a temporary name, then renamed: a reader never sees half a file."""
    path, fs = _path(spark, where)
    partial = _hadoop(spark).fs.Path(where + ".partial")
    fs.setWriteChecksum(False)  # no .crc file beside the report on a local disk
    stream = fs.create(partial, True)
    try:
        stream.write(bytearray(text.encode()))
    finally:
        stream.close()
    if fs.exists(path):
        fs.delete(path, False)
    fs.rename(partial, path)


def copy(spark: SparkSession, source: str, target: str) -> None:
    """Byte for byte, on any two file systems Hadoop knows; the target's folders are made."""
    (src, src_fs), (dst, dst_fs) = _path(spark, source), _path(spark, target)
    dst_fs.setWriteChecksum(False)  # no .crc file beside it on a local disk
    _hadoop(spark).fs.FileUtil.copy(src_fs, src, dst_fs, dst, False, spark._jsc.hadoopConfiguration())  # noqa: SLF001

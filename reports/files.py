"""Files through Hadoop's file systems, so the job reads and writes local paths, hdfs:// and s3a:// alike."""

from __future__ import annotations

from pyspark.sql import SparkSession


def _path(spark: SparkSession, where: str):
    path = spark._jvm.org.apache.hadoop.fs.Path(where)  # noqa: SLF001 (PySpark's own way to reach Hadoop)
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
    partial = spark._jvm.org.apache.hadoop.fs.Path(where + ".partial")  # noqa: SLF001
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
    jvm = spark._jvm  # noqa: SLF001
    (src, src_fs), (dst, dst_fs) = _path(spark, source), _path(spark, target)
    dst_fs.setWriteChecksum(False)  # no .crc file beside it on a local disk
    jvm.org.apache.hadoop.fs.FileUtil.copy(src_fs, src, dst_fs, dst, False, spark._jsc.hadoopConfiguration())  # noqa: SLF001

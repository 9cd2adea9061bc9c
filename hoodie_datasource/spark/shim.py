"""The jvm-shim: a small Scala jar that gives hoodie tables Hudi's SQL (see ``jvm-shim/README.md``).

``python -m hoodie_datasource.spark.shim`` (run by ``make install``) compiles ``jvm-shim/src`` with the
Scala compiler that ships in pyspark's own jars, so no Maven, sbt or download is needed, and writes
the jar next to this package. ``hoodie_datasource.session(builder)`` puts it on the session.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from hoodie_datasource.errors import HoodieError

logger = logging.getLogger(__name__)

SOURCES = Path(__file__).resolve().parents[2] / "jvm-shim" / "src"
JAR = Path(__file__).resolve().parent.parent / "jars" / "hoodie-shim.jar"
EXTENSIONS_CLASS = "org.apache.spark.sql.hoodie.HoodieSparkExtensions"
CATALOG_CLASS = "org.apache.spark.sql.hoodie.HoodieCatalog"


class ShimBuildError(HoodieError):
    """The jvm-shim (the jar SQL needs) could not be built or is missing, at ``hoodie_datasource.session()``.

    What to do: run ``make install`` (it compiles ``jvm-shim/`` with the Scala compiler inside pyspark), or
    ``python -m hoodie_datasource.spark.shim``; the message gives the compiler's output."""


def pyspark_jars() -> Path:
    import pyspark

    return Path(pyspark.__file__).resolve().parent / "jars"


def _sources() -> list[Path]:
    return sorted(SOURCES.rglob("*.scala")) if SOURCES.is_dir() else []


def is_current() -> bool:
    """The jar exists and is newer than every source file."""
    sources = _sources()
    return JAR.is_file() and all(JAR.stat().st_mtime >= s.stat().st_mtime for s in sources)


def build(force: bool = False) -> Path:
    """Compile the shim if its jar is missing or older than its sources; return the jar's path."""
    sources = _sources()
    if not sources:
        if JAR.is_file():
            return JAR
        raise ShimBuildError(f"No shim sources at {SOURCES} and no built jar at {JAR}; build from a source checkout")
    if is_current() and not force:
        return JAR
    java = os.path.join(os.environ["JAVA_HOME"], "bin", "java") if os.environ.get("JAVA_HOME") else "java"
    with tempfile.TemporaryDirectory(prefix="hoodie-shim-") as classes:
        command = [
            java, "-Xss8m", "-cp", str(pyspark_jars() / "*"), "scala.tools.nsc.Main",
            "-usejavacp", "-release", "17", "-deprecation", "-feature", "-d", classes, *map(str, sources),
        ]
        logger.info("Compiling the jvm-shim: %d Scala files", len(sources))
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:
            raise ShimBuildError(f"scalac failed ({done.returncode}):\n{done.stdout}{done.stderr}")
        JAR.parent.mkdir(parents=True, exist_ok=True)
        partial = JAR.with_suffix(".jar.tmp")
        with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as jar:
            jar.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\nCreated-By: hoodie-datasource\n")
            for path in sorted(Path(classes).rglob("*.class")):
                jar.write(path, path.relative_to(classes).as_posix())
        os.replace(partial, JAR)
    return JAR


def jar_path() -> Path:
    """The built jar, or a clear error saying how to build it."""
    if not JAR.is_file():
        raise ShimBuildError(f"The jvm-shim jar is not built ({JAR}); run `make install` or "
                             f"`{Path(sys.executable).name} -m hoodie_datasource.spark.shim`")
    if not is_current():
        logger.warning("The jvm-shim jar %s is older than its sources; rebuild with `make install`", JAR)
    return JAR


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    print(build(force="--force" in sys.argv))  # noqa: T201 - the one line a build script reports

"""The check that the running interpreter has what hoodie-datasource needs, done at import.

Spark's Python workers run ``spark.pyspark.python`` / ``PYSPARK_PYTHON`` or, with neither set,
``python3`` from the PATH, which is often not the interpreter the job was started with (a venv run as
``.venv/bin/python job.py`` without activating it). Such a worker finds this package on Spark's
PYTHONPATH but not its dependencies, and the first task failed deep inside an import with
``No module named 'pyarrow'`` under a JVM stack trace. This check fails first, in one line that
names the interpreter and the settings to change.
"""

from __future__ import annotations

import importlib.util
import sys

from hoodie_datasource.errors import PythonEnvironmentError

REQUIRED = ("pyarrow", "numpy", "fastavro", "obstore")


def check_dependencies() -> None:
    missing = [name for name in REQUIRED if importlib.util.find_spec(name) is None]
    if missing:
        raise PythonEnvironmentError(
            f"The Python interpreter {sys.executable} cannot run hoodie-datasource: it lacks "
            f"{', '.join(missing)}. Spark's Python workers run this interpreter: set PYSPARK_PYTHON (or "
            f"spark.pyspark.python) to the Python that has hoodie-datasource installed, or install it there")

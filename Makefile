# hoodie-datasource developer commands. `make help` lists them.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: help install azurite oracle hadoop-aws hbase test test-lane-local test-lane-services test-unit lint docs demo bench bench-hudi clean java-check

help:  ## list the targets
	@grep -E '^[a-z-]+:.*##' $(MAKEFILE_LIST) | sed 's/:.*## /\t/'

java-check:  ## Spark needs Java 17 or newer
	@command -v java >/dev/null 2>&1 || { echo "Java 17+ is required: apt-get install openjdk-17-jre-headless (or set JAVA_HOME)"; exit 1; }
	@v=$$(java -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -1); \
	 if [ -z "$$v" ] || [ "$$v" -lt 17 ]; then echo "Java 17+ is required, found: $$(java -version 2>&1 | head -1). Install openjdk-17-jre-headless."; exit 1; fi

$(STAMP): setup.cfg pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test,docs]'
	touch $(STAMP)

SHIM_JAR := hoodie_datasource/jars/hoodie-shim.jar
SHIM_SOURCES := $(shell find jvm-shim/src -name '*.scala')

$(SHIM_JAR): $(STAMP) $(SHIM_SOURCES)
	$(PY) -m hoodie_datasource.spark.shim

# Azurite, the Azure Blob emulator the tests start (tests/object_stores.py), pinned, from npm into .tools/
AZURITE_VERSION := 3.35.0
AZURITE_STAMP := .tools/azurite-$(AZURITE_VERSION).installed

$(AZURITE_STAMP):
	@if command -v npm >/dev/null 2>&1; then \
	  npm install --prefix .tools --no-audit --no-fund --save-exact azurite@$(AZURITE_VERSION) && touch $@; \
	else echo "npm not found: the Azure Blob tests will be skipped (CI=true fails them); install node 20 and npm"; fi

azurite: $(AZURITE_STAMP)  ## install Azurite (node + npm) into .tools/ for the object-store tests

# Apache Hudi itself, the oracle of the hudi_oracle tests (tests/hudi_oracle): its Spark 3.5 bundles from
# Maven Central into .tools/hudi-oracle/jars, and a venv of its own with pyspark 3.5 (ours has pyspark 4).
# 0.15.0 writes table version 6; 1.x reads version 6 and writes it with hoodie.write.table.version=6.
# The versions are also in tests/hudi_oracle/__init__.py.
HUDI_ORACLE_VERSIONS := 0.15.0 1.1.1
HUDI_ORACLE_PYSPARK := 3.5.7
ORACLE_DIR := .tools/hudi-oracle
ORACLE_JARS := $(foreach v,$(HUDI_ORACLE_VERSIONS),$(ORACLE_DIR)/jars/hudi-spark3.5-bundle_2.12-$(v).jar)
ORACLE_VENV_STAMP := $(ORACLE_DIR)/venv/.installed-pyspark-$(HUDI_ORACLE_PYSPARK)

$(ORACLE_DIR)/jars/hudi-spark3.5-bundle_2.12-%.jar:
	@command -v mvn >/dev/null 2>&1 || { echo "mvn not found: the hudi_oracle tests will be skipped (CI=true fails them); install maven (apt-get install maven)"; exit 0; }; \
	 mvn -q -B org.apache.maven.plugins:maven-dependency-plugin:3.6.1:copy \
	   -Dartifact=org.apache.hudi:hudi-spark3.5-bundle_2.12:$* -DoutputDirectory=$(CURDIR)/$(ORACLE_DIR)/jars

$(ORACLE_VENV_STAMP):
	rm -rf $(ORACLE_DIR)/venv
	$(PYTHON) -m venv $(ORACLE_DIR)/venv
	$(ORACLE_DIR)/venv/bin/python -m pip install -q --upgrade pip
	$(ORACLE_DIR)/venv/bin/python -m pip install -q 'pyspark==$(HUDI_ORACLE_PYSPARK)' 'pyarrow>=15' 'pandas>=2,<3'
	touch $@

oracle: java-check $(ORACLE_JARS) $(ORACLE_VENV_STAMP)  ## Apache Hudi 0.15 and 1.x (Spark 3.5 bundles, Maven) and their pyspark 3.5 venv into .tools/, for the hudi_oracle tests

# hadoop-aws (Hadoop's S3A file system) of the Hadoop version in pyspark's jars, with the AWS SDK bundle and the
# rest its pom names, from Maven Central into .tools/hadoop-aws/<version> (tests/hadoop-aws.pom.xml): the tests'
# Spark sessions put them on the classpath, so Spark's own parquet scan reads tables on the S3 server through
# s3a:// (tests/hadoop_aws.py). The version follows pyspark: a new pyspark fetches its own.
hadoop-aws: java-check $(STAMP)  ## hadoop-aws matching pyspark's Hadoop and its AWS SDK (Maven) into .tools/, for Spark's s3a:// reads in the object-store tests
	@command -v mvn >/dev/null 2>&1 || { echo "mvn not found: the s3a:// tests will be skipped (CI=true fails them); install maven (apt-get install maven)"; exit 0; }; \
	 dir=$$($(PY) -m tests.hadoop_aws) && [ -n "$$dir" ] || exit 1; \
	 if [ ! -f "$$dir/.complete" ]; then \
	   rm -rf "$$dir" && mvn -q -B -f tests/hadoop-aws.pom.xml -Dhadoop.version="$${dir##*/}" \
	     org.apache.maven.plugins:maven-dependency-plugin:3.6.1:copy-dependencies \
	     -DincludeScope=runtime -DoutputDirectory="$$dir" && touch "$$dir/.complete"; \
	 fi

# HBase 2.x (HMaster in local mode: master, region server and embedded ZooKeeper in one JVM) and its Thrift gateway,
# from Maven Central into .tools/hbase/<version> (tests/hbase.pom.xml): tests/hbase_server.py starts them for the HBase
# index's tests (tests/hbase). The version is also in tests/hbase_server.py. 2.6 is the newest line whose Thrift
# gateway Maven Central serves.
HBASE_VERSION := 2.6.1
HBASE_DIR := .tools/hbase/$(HBASE_VERSION)

hbase: java-check  ## HBase and its Thrift gateway (Maven) into .tools/, for the HBase index's tests
	@command -v mvn >/dev/null 2>&1 || { echo "mvn not found: the HBase index tests will be skipped (CI=true fails them); install maven (apt-get install maven)"; exit 0; }; \
	 if [ ! -f "$(HBASE_DIR)/.complete" ]; then \
	   rm -rf "$(HBASE_DIR)" && mvn -q -B -f tests/hbase.pom.xml -Dhbase.version=$(HBASE_VERSION) \
	     org.apache.maven.plugins:maven-dependency-plugin:3.6.1:copy-dependencies \
	     -DincludeScope=runtime -DoutputDirectory="$(CURDIR)/$(HBASE_DIR)" && touch "$(HBASE_DIR)/.complete"; \
	 fi

install: java-check $(STAMP) $(SHIM_JAR) azurite oracle hadoop-aws hbase  ## create .venv with the library, its test and documentation tools; build the jvm-shim; Azurite; the Hudi oracle; hadoop-aws; HBase

test: install  ## run the whole test suite (SQL, the slow object-store and fault suites, the property tests, the standalone-cluster suite: processes of their own)
	@# two lanes at once (much of a Spark test is waiting: JVM starts, servers, subprocesses; the docs lane
	@# runs the documentation's samples, builds the site strict and opens it in headless Chromium), each
	@# lane's output printed whole as each of its commands ends; the cluster suite alone after them
	$(MAKE) --no-print-directory -j2 --output-sync=line test-lane-local test-lane-services
	$(PY) -m pytest -q -m cluster

# the lanes take about as long as each other (measured on 2 cores, both lanes running: the default tests 22 min
# and Java Hudi's tests/hudi_oracle 10 in one; tests/sql 18, the object-store and fault suites 4.5, Java's data
# skipping 4, properties 1, the HBase index 4 (tests/hbase: a real HBase and Java Hudi, 10 tests), docs 2 in the other)
test-lane-local: install
	$(PY) -m pytest -q --durations=10 --ignore=tests/sql
	$(PY) -m pytest -q --durations=10 -m hudi_oracle tests/hudi_oracle

test-lane-services: install
	$(PY) -m pytest -q --durations=10 tests/sql
	$(PY) -m pytest -q --durations=10 -m "object_store or fault" --ignore=tests/sql
	$(PY) -m pytest -q --durations=10 -m hudi_oracle tests/sql
	$(PY) -m pytest -q --durations=5 -m property tests/property
	$(PY) -m pytest -q --durations=5 -m hbase tests/hbase
	NO_MKDOCS_2_WARNING=1 $(PY) -m pytest -q --durations=5 -m docs tests/docs

test-unit: install  ## only the tests that need no JVM
	$(PY) -m pytest -q tests/unit

lint: install  ## ruff over the library, the tests and the docs generator
	$(VENV)/bin/ruff check hoodie_datasource pyspark_hoodie tests docs

docs: install  ## regenerate the reference pages and diagrams (python -m docs.gen), then build the site into ./site (mkdocs --strict)
	$(PY) -m docs.gen
	NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs build --strict

demo: install  ## the trips example end to end on local Spark, in ./demo-output
	$(PY) -m hoodie_datasource.spark.demo demo-output/trips

bench: install  ## benchmarks against delta-rs, pyiceberg, a Spark reload and a pyarrow floor; BENCH_ARGS="--rows 1000000,5000000"
	$(PY) -m pip install -q -e '.[bench]'
	$(PY) benchmarks/run.py $(BENCH_ARGS)

bench-hudi: install  ## side by side with Apache Hudi 0.15 on Spark 3.5 (the oracle's bundle and venv); BENCH_ARGS="--rows 1000000,5000000"
	$(PY) -m pip install -q -e '.[bench]'
	$(PY) benchmarks/run_hudi.py $(BENCH_ARGS)

clean:  ## remove the venv and build leftovers
	rm -rf $(VENV) .tools build dist *.egg-info demo-output spark-warehouse site $(SHIM_JAR)

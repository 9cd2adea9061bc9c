# hoodie-datasource developer commands. `make help` lists them.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: help install azurite fake-gcs oracle hadoop-aws hbase kafka apicurio sharing-client test-pyarrow-floor test test-lane-local test-lane-services test-unit lint docs demo bench bench-hudi clean java-check

help:  ## list the targets
	@grep -E '^[a-z-]+:.*##' $(MAKEFILE_LIST) | sed 's/:.*## /\t/'

java-check:  ## Spark needs Java 17 or newer
	@command -v java >/dev/null 2>&1 || { echo "Java 17+ is required: apt-get install openjdk-17-jre-headless (or set JAVA_HOME)"; exit 1; }
	@v=$$(java -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -1); \
	 if [ -z "$$v" ] || [ "$$v" -lt 17 ]; then echo "Java 17+ is required, found: $$(java -version 2>&1 | head -1). Install openjdk-17-jre-headless."; exit 1; fi

$(STAMP): setup.cfg pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test,docs,sharing]'
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

# fake-gcs-server, the Google Cloud Storage emulator the tests start (tests/object_stores.py), pinned, built from its Go
# module into .tools/fake-gcs-server/<version>. The version is also in tests/object_stores.py.
FAKE_GCS_VERSION := 1.56.1
FAKE_GCS_BIN := .tools/fake-gcs-server/$(FAKE_GCS_VERSION)/fake-gcs-server
# its go.mod asks for Go 1.26: the go on PATH, else the one this kind of machine keeps in /usr/local/go, else Go's
# own toolchain module from the Go module proxy (what GOTOOLCHAIN=auto fetches; Debian's golang-go is 1.19) in .tools/
GO_TOOLCHAIN := 1.26.8
GO_FETCHED := .tools/go/$(GO_TOOLCHAIN)
GO ?= $(or $(shell command -v go 2>/dev/null),$(wildcard /usr/local/go/bin/go),$(GO_FETCHED)/go/bin/go)

$(GO_FETCHED)/go/bin/go:
	mkdir -p $(GO_FETCHED)
	curl -fsSL -o $(GO_FETCHED)/toolchain.zip \
	  https://proxy.golang.org/golang.org/toolchain/@v/v0.0.1-go$(GO_TOOLCHAIN).linux-amd64.zip
	cd $(GO_FETCHED) && $(PYTHON) -m zipfile -e toolchain.zip . && mv golang.org/toolchain@v0.0.1-go$(GO_TOOLCHAIN).linux-amd64 go \
	  && chmod +x go/bin/* go/pkg/tool/*/* && rm -rf toolchain.zip golang.org

$(FAKE_GCS_BIN): $(filter .tools/%,$(GO))
	GOBIN=$(CURDIR)/$(dir $@) $(GO) install github.com/fsouza/fake-gcs-server@v$(FAKE_GCS_VERSION)

fake-gcs: $(FAKE_GCS_BIN)  ## build fake-gcs-server (go) into .tools/ for the Google Cloud Storage tests

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

# Apache Kafka for the tests/kafka suite: the broker (kafka_2.13, run in KRaft mode by tests/kafka/server.py) and
# Spark's Kafka connector (spark-sql-kafka-0-10 with kafka-clients, the token provider and commons-pool2), from Maven
# Central into .tools/kafka/ (tests/kafka.pom.xml, tests/spark-sql-kafka.pom.xml). The connector is the newest that
# Maven Central serves for pyspark's Spark line (4.3.0 is not there: 4.2.0 runs on pyspark 4.3). The versions are also
# in tests/kafka/server.py.
KAFKA_VERSION := 4.4.0
SPARK_KAFKA_VERSION := 4.2.0
KAFKA_DIR := .tools/kafka
KAFKA_SERVER_STAMP := $(KAFKA_DIR)/server-$(KAFKA_VERSION)/.complete
SPARK_KAFKA_STAMP := $(KAFKA_DIR)/spark-sql-kafka-$(SPARK_KAFKA_VERSION)/.complete

$(KAFKA_SERVER_STAMP):
	@command -v mvn >/dev/null 2>&1 || { echo "mvn not found: the kafka tests will be skipped (CI=true fails them); install maven (apt-get install maven)"; exit 0; }; \
	 dir=$(CURDIR)/$(KAFKA_DIR)/server-$(KAFKA_VERSION); rm -rf "$$dir" && \
	 mvn -q -B -f tests/kafka.pom.xml -Dkafka.version=$(KAFKA_VERSION) \
	   org.apache.maven.plugins:maven-dependency-plugin:3.6.1:copy-dependencies \
	   -DincludeScope=runtime -DoutputDirectory="$$dir" && touch $@

$(SPARK_KAFKA_STAMP):
	@command -v mvn >/dev/null 2>&1 || { echo "mvn not found: the kafka tests will be skipped (CI=true fails them); install maven (apt-get install maven)"; exit 0; }; \
	 dir=$(CURDIR)/$(KAFKA_DIR)/spark-sql-kafka-$(SPARK_KAFKA_VERSION); rm -rf "$$dir" && \
	 mvn -q -B -f tests/spark-sql-kafka.pom.xml -Dspark.version=$(SPARK_KAFKA_VERSION) \
	   org.apache.maven.plugins:maven-dependency-plugin:3.6.1:copy-dependencies -DincludeScope=runtime \
	   -DincludeArtifactIds=spark-sql-kafka-0-10_2.13,spark-token-provider-kafka-0-10_2.13,kafka-clients,commons-pool2 \
	   -DoutputDirectory="$$dir" && touch $@

kafka: java-check $(KAFKA_SERVER_STAMP) $(SPARK_KAFKA_STAMP)  ## Apache Kafka's broker and Spark's Kafka connector (Maven) into .tools/kafka/, for the kafka tests


# Apicurio Registry, the schema registry of the AvroKafkaSource tests (its Confluent-compatible API; tests/kafka/
# registry.py starts it). Maven Central serves it as a Quarkus application's classes, not as a runnable build:
# tests/apicurio.pom.xml makes the runnable application from them with Quarkus's build step, in .tools/apicurio/
# <version>, every repository sent to Maven Central (tests/maven-central.settings.xml). 2.4.2.Final is the newest
# whose modules Maven Central serves whole (later ones lack apicurio-registry-schema-util-provider). Karapace is
# not on PyPI, Confluent's registry not on Maven Central. The version is also in tests/kafka/registry.py.
APICURIO_VERSION := 2.4.2.Final
APICURIO_DIR := .tools/apicurio/$(APICURIO_VERSION)

apicurio: java-check  ## Apicurio Registry (Maven, built with Quarkus) into .tools/, for the AvroKafkaSource schema-registry tests
	@command -v mvn >/dev/null 2>&1 || { echo "mvn not found: the schema-registry tests will be skipped (CI=true fails them); install maven (apt-get install maven)"; exit 0; }; \
	 if [ ! -f "$(APICURIO_DIR)/.complete" ]; then \
	   rm -rf "$(APICURIO_DIR)" && mvn -q -B -s tests/maven-central.settings.xml -f tests/apicurio.pom.xml \
	     -Dapicurio.version=$(APICURIO_VERSION) -Dapicurio.build.dir="$(CURDIR)/$(APICURIO_DIR)" package \
	     && touch "$(APICURIO_DIR)/.complete"; \
	 fi

# The official Delta Sharing client (PyPI delta-sharing, pinned) in an environment of its own: it pins pyarrow<=23.0.1
# and an older fsspec, so it never enters .venv; tests/sharing run it as a subprocess (tests/sharing/client_worker.py).
SHARING_CLIENT_VERSION := 1.4.2
SHARING_CLIENT_VENV := .tools/sharing-client/venv
SHARING_CLIENT_STAMP := $(SHARING_CLIENT_VENV)/.installed-$(SHARING_CLIENT_VERSION)

$(SHARING_CLIENT_STAMP):
	rm -rf $(SHARING_CLIENT_VENV)
	$(PYTHON) -m venv $(SHARING_CLIENT_VENV)
	$(SHARING_CLIENT_VENV)/bin/python -m pip install -q --upgrade pip
	$(SHARING_CLIENT_VENV)/bin/python -m pip install -q 'delta-sharing==$(SHARING_CLIENT_VERSION)'
	touch $@

sharing-client: $(SHARING_CLIENT_STAMP)  ## the official delta-sharing client in its own venv under .tools/, for tests/sharing

# The oldest pyarrow setup.cfg admits, in a venv of its own layered over .venv (its own site-packages first, then
# .venv's), so the unit tests run on it too: the floor is what is tested.
PYARROW_FLOOR := 23.0.1
FLOOR_VENV := .tools/pyarrow-floor/venv
FLOOR_STAMP := $(FLOOR_VENV)/.installed-pyarrow-$(PYARROW_FLOOR)

$(FLOOR_STAMP): $(STAMP)
	rm -rf $(FLOOR_VENV)
	$(PYTHON) -m venv $(FLOOR_VENV)
	$(FLOOR_VENV)/bin/python -m pip install -q 'pyarrow==$(PYARROW_FLOOR)'
	echo "import site; site.addsitedir('$$($(PY) -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")')" \
	  > "$$($(FLOOR_VENV)/bin/python -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")/zz-hoodie-venv.pth"
	touch $@

test-pyarrow-floor: $(FLOOR_STAMP)  ## the unit tests on the oldest pyarrow setup.cfg admits
	$(FLOOR_VENV)/bin/python -c "import pyarrow; assert pyarrow.__version__ == '$(PYARROW_FLOOR)', pyarrow.__version__"
	$(FLOOR_VENV)/bin/python -m pytest -q --durations=5 tests/unit

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

install: java-check $(STAMP) $(SHIM_JAR) azurite fake-gcs oracle hadoop-aws kafka apicurio sharing-client hbase  ## create .venv with the library, its test and documentation tools; build the jvm-shim; Azurite; fake-gcs-server; the Hudi oracle; hadoop-aws; Kafka; Apicurio Registry; the Delta Sharing client; HBase

test: install  ## run the whole test suite (SQL, the slow object-store and fault suites, the property tests, the standalone-cluster suite: processes of their own)
	@# two lanes at once (much of a Spark test is waiting: JVM starts, servers, subprocesses; the docs lane
	@# runs the documentation's samples, builds the site strict and opens it in headless Chromium), each
	@# lane's output printed whole as each of its commands ends; the cluster suite alone after them
	$(MAKE) --no-print-directory -j2 --output-sync=line test-lane-local test-lane-services
	$(PY) -m pytest -q -m cluster

# the lanes take about as long as each other (measured on 2 cores, both lanes running, 2026-11-29, the CPU busy:
# the default tests 21 min and Java Hudi's tests/hudi_oracle 16.5 in one, 37.5 in all; tests/sql 15, the
# object-store and fault suites 6, Java's data skipping 4, properties 0.5, Kafka with the schema registry 2.5, the
# HBase index 2, the Delta Sharing server 1.5, the unit tests on the oldest pyarrow 2.5 and docs 2 in the other,
# 36.5 in all)
test-lane-local: install
	$(PY) -m pytest -q --durations=10 --ignore=tests/sql --ignore=tests/sharing
	$(PY) -m pytest -q --durations=10 -m hudi_oracle tests/hudi_oracle

test-lane-services: install
	$(PY) -m pytest -q --durations=10 tests/sql
	$(PY) -m pytest -q --durations=10 -m "object_store or fault" --ignore=tests/sql
	$(PY) -m pytest -q --durations=10 -m hudi_oracle tests/sql
	$(PY) -m pytest -q --durations=5 -m property tests/property
	$(PY) -m pytest -q --durations=5 -m kafka tests/kafka
	$(PY) -m pytest -q --durations=5 -m hbase tests/hbase
	$(PY) -m pytest -q --durations=5 tests/sharing
	$(MAKE) --no-print-directory test-pyarrow-floor
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

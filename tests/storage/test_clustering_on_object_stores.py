"""Clustering on S3 (moto's server) as on local disk: the plan names its files by the table's URI, the groups
read and write through the storage layer, and the table reads the same after it, metadata table on."""

from __future__ import annotations

from hoodie_datasource import HoodieTable
from hoodie_datasource.client.local_engine import write_local
from tests.storage.tables import Place, rows, snapshot


def test_clustering_on_every_store(place: Place):
    options = place.write_options(**{"hoodie.parquet.small.file.limit": "0"})
    for round in range(3):
        write_local(place.storage(), rows(f"r{round}", n=4, ts=round), options)
    before = snapshot(place)
    table = HoodieTable(place.uri, place.options)
    instant = table.schedule_clustering(**place.options)
    pending = table.refresh().pending_clustering()
    assert [(p.input_groups, p.input_files, p.partitions, p.state) for p in pending] == [
        (2, 6, ("x", "y"), "REQUESTED")] and pending[0].input_bytes > 0
    assert table.run_clustering(instant, **place.options) == instant
    assert snapshot(place) == before
    assert HoodieTable(place.uri, place.options).validate_metadata() == []

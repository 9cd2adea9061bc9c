"""``hoodie-sharing`` (also ``python -m hoodie_datasource.sharing``):

* ``hoodie-sharing --config sharing.yaml``: serve the shares of the configuration;
* ``hoodie-sharing profile --config sharing.yaml --recipient NAME [--endpoint URL] [--output FILE]``: write the
  profile file of a recipient (standard output without ``--output``)."""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Sequence

from hoodie_datasource.errors import HoodieError


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="hoodie-sharing", description="A Delta Sharing server for hoodie tables")
    parser.add_argument("command", nargs="?", choices=("serve", "profile"), default="serve")
    parser.add_argument("--config", required=True, help="the server's YAML configuration")
    parser.add_argument("--recipient", help="profile: the recipient whose profile to write")
    parser.add_argument("--endpoint", help="profile: the server's URL as the recipient reaches it")
    parser.add_argument("--output", help="profile: the file to write (standard output by default)")
    parser.add_argument("--host", help="serve: listen on this address instead of the configured host")
    parser.add_argument("--port", type=int, help="serve: listen on this port instead of the configured one")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    from hoodie_datasource.sharing.config import load_config
    from hoodie_datasource.sharing.profiles import profile, write_profile
    from hoodie_datasource.sharing.server import make_server

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    args = _parser().parse_args(sys.argv[1:] if argv is None else argv)
    logger = logging.getLogger("hoodie_datasource.sharing")
    try:
        config = load_config(args.config)
        if args.command == "profile":
            if not args.recipient:
                raise SystemExit("hoodie-sharing profile: --recipient is required")
            if args.output:
                write_profile(config, args.recipient, args.output, args.endpoint)
            else:
                sys.stdout.write(json.dumps(profile(config, args.recipient, args.endpoint), indent=2) + "\n")
            return 0
    except HoodieError as exc:
        logger.error("%s: %s", type(exc).__name__, exc)
        return 2
    make_server(config, args.host, args.port).run()
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Serves moto's S3 on HOST PORT with one thread, so conditional writes are applied one request at a time.

moto checks If-Match/If-None-Match and then writes without a lock; serialising requests makes that check-then-act
atomic, which the CAS race tests rely on.
"""
import logging
import sys

from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app
from werkzeug.serving import run_simple


def main() -> None:
    if len(sys.argv) != 3:
        sys.exit("usage: moto_serve.py HOST PORT")
    host, port = sys.argv[1], int(sys.argv[2])
    # One access-log line per request would cost the single thread time and fill the log.
    logging.getLogger("werkzeug").setLevel(logging.WARNING)
    run_simple(host, port, DomainDispatcherApplication(create_backend_app), threaded=False)


if __name__ == "__main__":
    main()

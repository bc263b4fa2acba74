#!/bin/sh
# The hub image's entrypoint. `serve` (the default) runs the hub's server on every
# interface of the container, on PORT (8700 unless set), with any further `webhub serve`
# options after it; anything else runs as given: `webhub db current`, `webhub user add`.
#
# No `webhub db upgrade` here: the hub upgrades its schema itself at start, one node at
# a time under the database's lock. Settings, WEBHUB_SECRET_FILE and the other *_FILE
# forms included, are read by the hub itself.
set -eu

if [ "$#" -eq 0 ] || [ "$1" = serve ]; then
    [ "$#" -eq 0 ] || shift
    exec webhub serve --host "${LISTEN_HOST:-0.0.0.0}" --port "${PORT:-8700}" "$@"
fi
exec "$@"

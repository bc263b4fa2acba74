# WebJobs: `make run` starts the hub with embedded defaults; `make test` runs the
# whole suite. Both set up what they need first and are safe to repeat.

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
HOST ?= 127.0.0.1
PORT ?= 8700

.PHONY: setup run console test lint bench clean console-bundle

QT_X11_PACKAGES := libxcb1 libx11-xcb1 libxcb-cursor0 libxcb-icccm4 libxcb-image0 \
	libxcb-keysyms1 libxcb-randr0 libxcb-render0 libxcb-render-util0 libxcb-shape0 \
	libxcb-shm0 libxcb-sync1 libxcb-util1 libxcb-xfixes0 libxcb-xkb1 libxkbcommon-x11-0

MODULES := hub/engine/js/modules
MODULES_STAMP := $(MODULES)/node_modules/.installed
DOCS_UI := hub/api/docs_ui
DOCS_UI_STAMP := $(DOCS_UI)/node_modules/.installed
JSLINT := tools/jslint
JSLINT_STAMP := $(JSLINT)/node_modules/.installed
WORKERD := bench/workerd
WORKERD_STAMP := $(WORKERD)/node_modules/.installed
# The sandbox scripts `make lint` runs eslint over (rules: $(JSLINT)/eslint.config.js):
# every one of them (the approved modules under js/modules are not ours).
ESLINT_FILES := $(wildcard hub/engine/js/*.js hub/engine/js/web/*.js)

setup: $(STAMP) $(MODULES_STAMP) $(DOCS_UI_STAMP) $(JSLINT_STAMP)

# The npm modules jobs may require(), pinned by the lockfile.
$(MODULES_STAMP): $(MODULES)/package.json $(MODULES)/package-lock.json
	@command -v npm >/dev/null || { apt-get update -qq && apt-get install -y -qq nodejs npm; }
	npm ci --prefix $(MODULES) --no-audit --no-fund --silent
	touch $(MODULES_STAMP)

# Swagger UI's files, which the hub serves at /docs, pinned by their lockfile.
$(DOCS_UI_STAMP): $(DOCS_UI)/package.json $(DOCS_UI)/package-lock.json
	@command -v npm >/dev/null || { apt-get update -qq && apt-get install -y -qq nodejs npm; }
	npm ci --prefix $(DOCS_UI) --no-audit --no-fund --silent
	touch $(DOCS_UI_STAMP)

# eslint, dev tooling only (never loaded by the hub), pinned by its own lockfile.
$(JSLINT_STAMP): $(JSLINT)/package.json $(JSLINT)/package-lock.json
	@command -v npm >/dev/null || { apt-get update -qq && apt-get install -y -qq nodejs npm; }
	npm ci --prefix $(JSLINT) --no-audit --no-fund --silent
	touch $(JSLINT_STAMP)

# workerd, the bench's upper-bound anchor (bench only), pinned by its own lockfile.
$(WORKERD_STAMP): $(WORKERD)/package.json $(WORKERD)/package-lock.json
	@command -v npm >/dev/null || { apt-get update -qq && apt-get install -y -qq nodejs npm; }
	npm ci --prefix $(WORKERD) --no-audit --no-fund --silent
	touch $(WORKERD_STAMP)

$(STAMP): pyproject.toml
	@$(PYTHON) -c "import venv, ensurepip" 2>/dev/null || \
		{ apt-get update -qq && apt-get install -y -qq python3-venv; }
	@# The browser tests drive Debian's Chromium (never a downloaded browser build).
	@command -v chromium >/dev/null || \
		{ apt-get update -qq && apt-get install -y -qq chromium; }
	@# db.exec reaches PostgreSQL, MariaDB and SQLite3 through unixODBC and their ODBC drivers.
	@dpkg -s unixodbc odbc-postgresql odbc-mariadb libsqliteodbc >/dev/null 2>&1 || \
		{ apt-get update -qq && \
		  apt-get install -y -qq unixodbc odbc-postgresql odbc-mariadb libsqliteodbc; }
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	@# Qt (the console) needs EGL, xkbcommon, fontconfig and D-Bus even offscreen.
	@dpkg -s libegl1 libgl1 libxkbcommon0 libfontconfig1 libdbus-1-3 fonts-dejavu-core >/dev/null 2>&1 || \
		{ apt-get update -qq && \
		  apt-get install -y -qq libegl1 libgl1 libxkbcommon0 libfontconfig1 libdbus-1-3 fonts-dejavu-core; }
	@# On a real X display Qt's xcb plugin needs these too (libxcb-cursor0 it loads at run
	@# time); Xvfb and xdotool let the tests run the console on one.
	@dpkg -s $(QT_X11_PACKAGES) xvfb xdotool >/dev/null 2>&1 || \
		{ apt-get update -qq && apt-get install -y -qq $(QT_X11_PACKAGES) xvfb xdotool; }
	$(PY) -m pip install --quiet -e ".[console,dev]"
	touch $(STAMP)

# With a display (DISPLAY or WAYLAND_DISPLAY) the hub runs in the background and the
# Owner console opens beside it; closing the console stops the hub. Without one,
# the hub runs in the foreground as before.
run: setup
	@if [ -n "$$DISPLAY$$WAYLAND_DISPLAY" ]; then \
		$(VENV)/bin/webhub serve --host $(HOST) --port $(PORT) --demo-owner & hub=$$!; \
		trap 'kill $$hub 2>/dev/null; wait $$hub 2>/dev/null' EXIT INT TERM; \
		for i in $$(seq 1 100); do \
			$(PY) -c "import httpx,sys; httpx.get('http://$(HOST):$(PORT)/api/webjobs/health', timeout=1)" \
				2>/dev/null && break; sleep 0.2; \
		done; \
		$(VENV)/bin/webjobs-console --hub http://$(HOST):$(PORT); \
	else \
		exec $(VENV)/bin/webhub serve --host $(HOST) --port $(PORT) --demo-owner; \
	fi

# The Owner console alone, e.g. against a hub that is already running.
console: setup
	$(VENV)/bin/webjobs-console $(if $(HUB),--hub $(HUB))

lint: setup jslint
	$(VENV)/bin/ruff check hub shared console_app tests bench
	$(VENV)/bin/lint-imports
	$(VENV)/bin/mypy

.PHONY: jslint
jslint: $(JSLINT_STAMP)
	$(JSLINT)/node_modules/.bin/eslint --config $(JSLINT)/eslint.config.js --max-warnings 0 \
		$(ESLINT_FILES)

# Two pytest processes share the suite by file; the tests that stop the PostgreSQL server
# run after them, alone, so nothing else is using it when it goes away.
TEST_WORKERS ?= 2
# Coverage of the test process itself (hubs the tests start as programs are not counted);
# shared/ must stay at 100 %.
COVERAGE := --cov --cov-report=
test: setup lint
	@bash .ci/services.sh
	$(PY) -m pytest -q -n $(TEST_WORKERS) --dist loadfile -m "not stops_postgresql" $(COVERAGE) \
		--durations=30 --durations-min=5
	$(PY) -m pytest -q -m stops_postgresql $(COVERAGE) --cov-append
	$(PY) -m coverage report --skip-covered --skip-empty --sort=cover | tail -n 4
	$(PY) -m coverage report --include='shared/*' --fail-under=100

# The benchmark needs wrk (Debian package), node (for the reference server) and workerd.
bench: setup $(WORKERD_STAMP)
	@command -v wrk >/dev/null || { apt-get update -qq && apt-get install -y -qq wrk; }
	@command -v node >/dev/null || { apt-get update -qq && apt-get install -y -qq nodejs; }
	$(PY) bench/run_bench.py $(BENCH_ARGS)

# The Owner console as a desktop program in dist/webjobs-console/ (PyInstaller); skipped
# when console_app/, shared/, the spec and the bundled packages are unchanged.
console-bundle: setup
	$(PY) packaging/build_console_bundle.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache build dist .coverage

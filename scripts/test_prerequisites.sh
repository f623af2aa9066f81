#!/usr/bin/env bash
# What the browser and database tests need besides Python packages:
#  - Debian's chromium (the Playwright browser download does not work offline), installed when missing
#    and we are root;
#  - the local PostgreSQL server, started when it is installed but down.
# Anything that cannot be arranged is reported; the tests then fail (CI) or skip with that reason.
set -u

if ! command -v chromium >/dev/null 2>&1; then
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    echo "Installing Debian chromium for the browser tests…"
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium fonts-noto-color-emoji fonts-wqy-microhei >/dev/null) \
      || echo "WARNING: could not install chromium; browser tests will not run."
  else
    echo "WARNING: chromium is missing and this user cannot install it; browser tests will not run."
  fi
fi

if command -v pg_isready >/dev/null 2>&1 && ! pg_isready -q -h 127.0.0.1 -p 5432; then
  if command -v pg_ctlcluster >/dev/null 2>&1 && [ -d /etc/postgresql ]; then
    echo "Starting the local PostgreSQL server…"
    for version in $(ls /etc/postgresql); do
      pg_ctlcluster --skip-systemctl-redirect "$version" main start || true
    done
    for _ in $(seq 1 20); do pg_isready -q -h 127.0.0.1 -p 5432 && break; sleep 0.5; done
  fi
  pg_isready -q -h 127.0.0.1 -p 5432 || echo "WARNING: PostgreSQL on 127.0.0.1:5432 is not running."
fi
exit 0

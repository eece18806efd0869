#!/usr/bin/env python3
"""Send human-monitor (HMP) commands to a QEMU monitor on a unix socket.

    vm/monitor.py SOCKET COMMAND...

Each COMMAND is sent in turn and its answer printed after a line
"(qemu) COMMAND". A QEMU that does not answer within the timeout (5 s a
command, MONITOR_TIMEOUT to change it) is stuck itself: the script says
so on stdout and exits 3; a socket it cannot connect to exits 2.
vm/run.sh uses it on a guest that froze (freeze_guard).
"""

import os
import socket
import sys
import time

PROMPT = b"(qemu) "


def read_prompt(sock, deadline):
    """Everything up to the next prompt, or None past the deadline."""
    buf = b""
    while not buf.endswith(PROMPT):
        left = deadline - time.monotonic()
        if left <= 0:
            return None
        sock.settimeout(left)
        try:
            chunk = sock.recv(65536)
        except socket.timeout:
            return None
        if not chunk:
            return None
        buf += chunk
    return buf[: -len(PROMPT)]


def clean(text):
    """HMP echoes the command with terminal escapes; keep the plain lines."""
    out = []
    for line in text.decode(errors="replace").replace("\r", "").split("\n"):
        if "\x1b" in line or not line.strip():
            continue
        out.append(line)
    return out


def main():
    if len(sys.argv) < 3:
        sys.stderr.write(__doc__)
        return 2
    path, commands = sys.argv[1], sys.argv[2:]
    timeout = float(os.environ.get("MONITOR_TIMEOUT", "5"))
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(path)
    except OSError as e:
        print(f"monitor: cannot connect to {path}: {e}")
        return 2
    if read_prompt(sock, time.monotonic() + timeout) is None:
        print(f"monitor: no prompt from QEMU in {timeout:g} s: QEMU itself is stuck")
        return 3
    for cmd in commands:
        sock.sendall(cmd.encode() + b"\n")
        answer = read_prompt(sock, time.monotonic() + timeout)
        print(f"(qemu) {cmd}")
        if answer is None:
            print(f"monitor: no answer in {timeout:g} s: QEMU itself is stuck")
            return 3
        for line in clean(answer):
            if line.strip() != cmd:
                print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())

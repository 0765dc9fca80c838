"""What execnet starts instead of ``python`` for an xdist worker of a forked test run
(tests/forkrun.py): it hands its stdin, stdout and stderr to the forking process, which forks
the worker on them, and exits with the worker's status."""

import json
import os
import socket
import sys

s = socket.socket(socket.AF_UNIX)
s.connect(os.environ["FORKRUN_SOCKET"])
req = {"argv": sys.argv[1:], "cwd": os.getcwd(), "env": dict(os.environ)}
socket.send_fds(s, [json.dumps(req).encode()], [0, 1, 2])
s.shutdown(socket.SHUT_WR)
data = b""
while chunk := s.recv(64):
    data += chunk
code = int(data or b"1")
sys.exit(code if code >= 0 else 128 - code)

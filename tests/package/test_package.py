#!/usr/bin/env python3
"""The Debian package and the systemd unit, with the real tools.

test_package.py BUILD_DIR: `cpack -G DEB` in the build, the package's
control checked (Depends, the postinst that makes the user), the .deb
unpacked into a scratch root with `dpkg -x`, gpubenchd started from there
(its web page and worker found beside it, as installed) and asked for
/healthz and the page, the packaged client asked too; then the unit, with
ExecStart pointed into the scratch root, through `systemd-analyze verify`
(skipped, saying so loudly, where systemd-analyze is not installed).

Exit 0 passed, 1 failed, 77 skipped (no dpkg or cpack)."""
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request


def listening_port(proc, log_path, timeout=10):
    """The port of a gpubenchd started on port 0, from its "listening on"
    line (no race for a free port with tests that run beside this one)."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        with open(log_path, "rb") as f:
            m = re.search(rb"listening on http://127\.0\.0\.1:(\d+)", f.read())
        if m:
            return int(m.group(1))
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    with open(log_path, errors="replace") as f:
        raise AssertionError("the packaged daemon never said where it listens:\n" + f.read())


def run(*cmd, **kw):
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if p.returncode != 0:
        raise AssertionError("%s exited %d:\n%s%s" % (" ".join(cmd), p.returncode, p.stdout, p.stderr))
    return p.stdout


def check_backup_script(script, daemon, db, tmp):
    """The packaged backup script, three times with GPUBENCH_BACKUP_KEEP=2:
    each run makes a checked backup, and only the newest two are kept."""
    folder = os.path.join(tmp, "backups")
    env = dict(os.environ, GPUBENCHD=daemon, GPUBENCH_DB=db, GPUBENCH_BACKUP_DIR=folder,
               GPUBENCH_BACKUP_KEEP="2")
    made = []
    for _ in range(3):
        out = subprocess.run([script], env=env, capture_output=True, text=True, timeout=60)
        assert out.returncode == 0 and "integrity ok" in out.stdout, out.stdout + out.stderr
        made.append(sorted(os.listdir(folder))[-1])
    assert sorted(os.listdir(folder)) == made[1:], (os.listdir(folder), made)
    print("packaged gpubench-backup: keeps the newest 2 of 3")


def verify_backup_units(units, script, tmp):
    """The backup's service and timer, as systemd reads them."""
    copies = []
    for unit in units:
        with open(unit) as f:
            text = f.read()
        if unit.endswith(".service"):
            exec_line = [line for line in text.splitlines() if line.startswith("ExecStart=")][0]
            text = text.replace(exec_line.split("=", 1)[1].split()[0], script)
        copy = os.path.join(tmp, os.path.basename(unit))
        with open(copy, "w") as f:
            f.write(text)
        copies.append(copy)
    p = subprocess.run(["systemd-analyze", "verify"] + copies, capture_output=True, text=True)
    mine = [line for line in (p.stdout + p.stderr).splitlines() if "gpubench-backup" in line]
    assert p.returncode == 0 and not mine, "systemd-analyze verify:\n" + p.stdout + p.stderr
    print("systemd-analyze verify of gpubench-backup.service and .timer: clean")


def main(build):
    for tool in ("cpack", "dpkg", "dpkg-deb"):
        if shutil.which(tool) is None:
            print("SKIPPED: %s is not installed" % tool)
            return 77
    tmp = tempfile.mkdtemp(prefix="gpubench-package-")
    pkg, root = os.path.join(tmp, "pkg"), os.path.join(tmp, "root")
    run("cpack", "-G", "DEB", "-B", pkg, "--config", os.path.join(build, "CPackConfig.cmake"))
    debs = glob.glob(os.path.join(pkg, "*.deb"))
    assert len(debs) == 1, debs
    control = run("dpkg-deb", "-f", debs[0])
    depends = [line for line in control.splitlines() if line.startswith("Depends:")][0]
    for dep in ("libmicrohttpd12", "libcjson1", "libsqlite3-0", "libcurl4", "libnettle8",
                "libjs-chart.js", "adduser"):
        assert dep in depends, "%s not in %s" % (dep, depends)
    ctl = os.path.join(tmp, "control")
    run("dpkg-deb", "-e", debs[0], ctl)
    with open(os.path.join(ctl, "postinst")) as f:
        postinst = f.read()
    assert "adduser --system" in postinst and "gpubench" in postinst, postinst
    assert os.access(os.path.join(ctl, "postinst"), os.X_OK), "postinst is not executable"
    run("dpkg", "-x", debs[0], root)
    daemons = glob.glob(os.path.join(root, "usr*", "**", "bin", "gpubenchd"), recursive=True)
    assert len(daemons) == 1, daemons
    bindir = os.path.dirname(daemons[0])
    prefix = os.path.dirname(bindir)
    for f in ("gpubench", "gpubench-worker"):
        assert os.access(os.path.join(bindir, f), os.X_OK), f + " not packaged"
    units = glob.glob(os.path.join(prefix, "lib", "systemd", "system", "gpubenchd.service"))
    assert units, "no gpubenchd.service in the package"
    assert os.path.isfile(os.path.join(prefix, "share", "gpubench", "web", "index.html"))
    backup_units = [os.path.join(prefix, "lib", "systemd", "system", "gpubench-backup." + kind)
                    for kind in ("service", "timer")]
    for unit in backup_units:
        assert os.path.isfile(unit), unit + " not packaged"
    backup_scripts = glob.glob(os.path.join(prefix, "**", "gpubench", "gpubench-backup"),
                               recursive=True)
    assert len(backup_scripts) == 1 and os.access(backup_scripts[0], os.X_OK), backup_scripts
    print("package:", os.path.basename(debs[0]), depends)

    # The daemon as unpacked: its web/ and worker found from where it lies.
    log_path = os.path.join(tmp, "daemon.log")
    log = open(log_path, "wb")
    proc = subprocess.Popen([daemons[0], "--listen", "127.0.0.1:0",
                             "--db", os.path.join(tmp, "gpubench.db")], stdout=log, stderr=log)
    try:
        port = listening_port(proc, log_path)
        url = "http://127.0.0.1:%d" % port
        for _ in range(100):
            try:
                with urllib.request.urlopen(url + "/healthz", timeout=2) as r:
                    assert r.status == 200
                    break
            except OSError:
                time.sleep(0.1)
        else:
            raise AssertionError("no /healthz from the packaged daemon")
        with urllib.request.urlopen(url + "/", timeout=5) as r:
            page = r.read().decode()
        assert r.status == 200 and "<html" in page.lower() and "app.js" in page, page[:300]
        print("packaged daemon: /healthz and the page answer")
        # the packaged client reached the packaged daemon: its empty list
        # (a table's header, or since the client says so, "no runs yet")
        out = run(os.path.join(bindir, "gpubench"), "runs", "--url", url)
        assert out.startswith("id") or out == "no runs yet\n", out
    finally:
        proc.terminate()
        proc.wait(20)
        log.close()
    assert proc.returncode == 0, "gpubenchd exited %s" % proc.returncode
    check_backup_script(backup_scripts[0], daemons[0], os.path.join(tmp, "gpubench.db"), tmp)

    # The unit, as systemd reads it, with its binary where it was unpacked.
    if shutil.which("systemd-analyze") is None:
        print("SKIPPED LOUDLY: systemd-analyze is not installed: the unit was not verified")
    else:
        with open(units[0]) as f:
            unit = f.read()
        assert "PrivateDevices" not in unit.split("[Service]")[1].replace("NOT set", "")
        for opt in ("StateDirectory=gpubench", "ProtectSystem=strict", "NoNewPrivileges=yes",
                    "DeviceAllow=char-nvidia-frontend rw", "--db /var/lib/gpubench/gpubench.db"):
            assert opt in unit, opt
        exec_line = [line for line in unit.splitlines() if line.startswith("ExecStart=")][0]
        binary = exec_line.split("=", 1)[1].split()[0]
        copy = os.path.join(tmp, "gpubenchd.service")
        with open(copy, "w") as f:
            f.write(unit.replace(binary, daemons[0]))
        p = subprocess.run(["systemd-analyze", "verify", copy], capture_output=True, text=True)
        # Only what is about this unit counts (other units of the host may warn).
        mine = [line for line in (p.stdout + p.stderr).splitlines() if "gpubenchd.service" in line]
        assert p.returncode == 0 and not mine, "systemd-analyze verify:\n" + p.stdout + p.stderr
        print("systemd-analyze verify: clean")
        verify_backup_units(backup_units, backup_scripts[0], tmp)
    shutil.rmtree(tmp)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))

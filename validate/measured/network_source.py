"""Shared by the network sources' regenerate.py scripts (validate/measured/README.md, "Network sources").

slug() is the rule the README gives for a row's workload name (zoo/<slug>): the source's network name in
lowercase, any character outside [a-z0-9._-] replaced by '-'.  git() reads a fetched (bare) mirror.
Standard library only.
"""
import re
import subprocess


def slug(s):
    return re.sub(r"[^a-z0-9._-]", "-", s.lower())


def git(gitdir, *args):
    """stdout of `git --git-dir GITDIR ARGS...` as text; a failing git raises."""
    return subprocess.run(["git", "--git-dir", gitdir] + list(args), check=True,
                          stdout=subprocess.PIPE).stdout.decode("utf-8")

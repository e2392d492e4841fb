"""xla_textproto.py -- the protobuf text format of XLA's GPU performance tables, read by the xla-matmul and
xla-collective regenerate.py scripts (python3 standard library only)."""
import re

TOKEN = re.compile(r'\s+|#[^\n]*|"(?:[^"\\\n]|\\.)*"|[{}:<>\[\],;]|[^\s{}:<>\[\],;"#]+')


def parse_textproto(text):
    """Protobuf text format -> nested dict: field name -> list of values (str or dict)."""
    toks, pos = [], 0
    for m in TOKEN.finditer(text):
        if m.start() != pos:
            raise ValueError("textproto: cannot tokenize at offset %d" % pos)
        pos = m.end()
        t = m.group(0)
        if not (t[0].isspace() or t[0] == "#"):
            toks.append(t)
    if pos != len(text):
        raise ValueError("textproto: trailing text at offset %d" % pos)
    toks.append(None)
    i = 0

    def message(end):
        nonlocal i
        out = {}
        while toks[i] != end:
            name = toks[i]
            if name is None or name in "{}<>:":
                raise ValueError("textproto: unexpected %r" % (name,))
            i += 1
            if toks[i] == ":":
                i += 1
            if toks[i] in ("{", "<"):
                close = "}" if toks[i] == "{" else ">"
                i += 1
                value = message(close)
            else:
                value = toks[i]
                i += 1
            if toks[i] in (",", ";"):
                i += 1
            out.setdefault(name, []).append(value)
        i += 1
        return out

    return message(None)


def unquote(s):
    if not (len(s) >= 2 and s[0] == '"' and s[-1] == '"'):
        raise ValueError("expected a string, got %r" % s)
    return s[1:-1]

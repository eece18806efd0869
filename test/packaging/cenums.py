#!/usr/bin/python3
"""Compare the constants of two C headers: the UAPI header and the one the
kernel's ynl-gen-c.py generates from the YNL spec.

    cenums.py HEADER GENERATED

The C compiler evaluates every enumerator and #define of both (implicit
enum values, 1U << n, ...). They agree when every constant of HEADER has
the same value in GENERATED, except the *_UNSPEC enumerators (0), which
YNL leaves implicit, and GENERATED has nothing else but *_NTF aliases of
commands (events that share a request's command number). Exit 0 if they
agree; otherwise every difference is printed.
"""
import os
import re
import subprocess
import sys
import tempfile


def names(path):
    text = open(path).read()
    text = re.sub(r'/\*.*?\*/', '', text, flags=re.S)
    out = []
    for body in re.findall(r'enum(?:\s+\w+)?\s*\{(.*?)\}', text, flags=re.S):
        for item in body.split(','):
            m = re.match(r'\s*([A-Za-z_]\w*)', item)
            if m:
                out.append(m.group(1))
    for m in re.finditer(r'^#define[ \t]+([A-Za-z_]\w*)[ \t]+\S', text, flags=re.M):
        out.append(m.group(1))
    return out


def values(path):
    ns = names(path)
    prog = ['#include <stdio.h>', f'#include "{os.path.abspath(path)}"', 'int main(void) {']
    for n in ns:
        prog.append(f'printf("%s %s\\n", "{n}", _Generic(({n}), char *: "str:", default: ""));')
        prog.append(f'_Generic(({n}), char *: printf("%s\\n", (const char *)(uintptr_t)({n})), '
                    f'default: printf("%lld\\n", (long long)(uintptr_t)({n})));')
    prog.append('return 0; }')
    with tempfile.TemporaryDirectory() as d:
        src, exe = os.path.join(d, 'v.c'), os.path.join(d, 'v')
        with open(src, 'w') as f:
            f.write('#include <stdint.h>\n' + '\n'.join(prog) + '\n')
        subprocess.run(['gcc', '-std=c11', '-Wall', '-Werror', '-Wno-int-to-pointer-cast',
                        '-o', exe, src], check=True)
        out = subprocess.run([exe], check=True, capture_output=True, text=True).stdout.splitlines()
    vals = {}
    for i in range(0, len(out), 2):
        name, kind = (out[i].split(' ', 1) + [''])[:2]
        vals[name] = kind + out[i + 1]
    return vals


def main():
    hdr, gen = values(sys.argv[1]), values(sys.argv[2])
    bad = []
    for n, v in hdr.items():
        if n.endswith('_H'):
            continue  # the include guard
        if n.endswith('_UNSPEC'):
            if v != '0':
                bad.append(f'{n} = {v} in the header, not 0')
            continue
        if n not in gen:
            bad.append(f'{n} (= {v}) is not in the spec')
        elif gen[n] != v:
            bad.append(f'{n} = {v} in the header, {gen[n]} from the spec')
    for n, v in gen.items():
        if n in hdr or n.endswith('_H'):
            continue
        base = n[:-len('_NTF')] if n.endswith('_NTF') else None
        if base and hdr.get(base) == v:
            continue
        bad.append(f'{n} (= {v}) from the spec is not in the header')
    for b in bad:
        print(b)
    print(f'{len(hdr)} constants in the header, {len(gen)} from the spec, {len(bad)} differences')
    return 1 if bad else 0


sys.exit(main())

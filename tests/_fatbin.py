"""Read which GPU architectures a shared library's CUDA fatbinary holds, from
its ELF `.nv_fatbin` section (there is no cuobjdump on these machines).

The section is one or more fatbinaries, each a 16-byte header (magic
0xBA55ED50, u16 version, u16 header size, u64 size of the entries) followed by
entries, each with its own header: u16 kind (1 PTX, 2 ELF/SASS), u16, u32
header size, u64 payload size, ..., u32 arch (the SM number) at offset 28.
"""

from __future__ import annotations

import struct

FATBIN_MAGIC = 0xBA55ED50
KIND_PTX, KIND_ELF = 1, 2


def elf_section(path: str, name: str) -> bytes:
    """The bytes of one section of a 64-bit little-endian ELF file."""
    data = open(path, "rb").read()
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise ValueError(f"{path}: not a 64-bit little-endian ELF file")
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    def header(i):
        return struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize)
    strtab = header(shstrndx)
    names = data[strtab[4]:strtab[4] + strtab[5]]
    for i in range(shnum):
        h = header(i)
        sec_name = names[h[0]:names.index(b"\0", h[0])].decode()
        if sec_name == name:
            return data[h[4]:h[4] + h[5]]
    raise KeyError(f"{path}: no {name} section")


def fatbin_entries(blob: bytes) -> list:
    """[(kind, sm)] of every entry of every fatbinary in blob: ("sass", 80), ("ptx", 120)."""
    out, pos = [], 0
    while pos + 16 <= len(blob):
        magic, _version, hsize, size = struct.unpack_from("<IHHQ", blob, pos)
        if magic != FATBIN_MAGIC:
            if not blob[pos:].strip(b"\0"):
                break  # padding
            raise ValueError(f"bad fatbinary magic {magic:#x} at offset {pos}")
        entry, end = pos + hsize, pos + hsize + size
        while entry < end:
            kind, _, ehsize, esize = struct.unpack_from("<HHIQ", blob, entry)
            arch, = struct.unpack_from("<I", blob, entry + 28)
            out.append(({KIND_PTX: "ptx", KIND_ELF: "sass"}.get(kind, f"kind{kind}"), arch))
            entry += ehsize + esize
        pos = (end + 7) & ~7
    return out

"""The few pieces of Protobuf's wire format an HFile uses: its trailer (``TrailerProto``) and its file info
(``InfoProto``) are length-delimited messages of varint and bytes fields (HBase's ``HFile.proto``).

Why by hand: two small messages do not justify a generated-code dependency, and reading them needs only
varints and length-delimited fields. A field of another wire type is refused as damage, not skipped: the
two messages have none."""

from __future__ import annotations

from collections.abc import Iterator

from hoodie_datasource.errors import CorruptFileError

VARINT = 0
LENGTH_DELIMITED = 2
_UINT64 = (1 << 64) - 1


def encode_varint(value: int) -> bytes:
    """An unsigned varint; a negative value is written as its 64-bit two's complement, as Protobuf writes
    a negative ``uint64`` (HBase's unset offsets, -1)."""
    value &= _UINT64
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def decode_varint(data: bytes | memoryview, pos: int, where: str) -> tuple[int, int]:
    """The varint at ``pos`` and the position after it."""
    value = shift = 0
    while True:
        if pos >= len(data) or shift > 63:
            raise CorruptFileError(f"{where}: a Protobuf varint runs past its message")
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, pos
        shift += 7


def signed64(value: int) -> int:
    """A decoded ``uint64`` read back as Java's ``long`` (HBase stores -1 for "no data block")."""
    return value - (1 << 64) if value >= 1 << 63 else value


def fields(message: bytes | memoryview, where: str) -> Iterator[tuple[int, int | bytes]]:
    """The ``(field number, value)`` pairs of a message: an int for a varint, bytes for a delimited field."""
    pos = 0
    while pos < len(message):
        tag, pos = decode_varint(message, pos, where)
        number, wire_type = tag >> 3, tag & 7
        if wire_type == VARINT:
            value, pos = decode_varint(message, pos, where)
            yield number, value
        elif wire_type == LENGTH_DELIMITED:
            length, pos = decode_varint(message, pos, where)
            if pos + length > len(message):
                raise CorruptFileError(f"{where}: Protobuf field {number} runs past its message")
            yield number, bytes(message[pos:pos + length])
            pos += length
        else:
            raise CorruptFileError(f"{where}: Protobuf field {number} has wire type {wire_type}, which HFile's "
                                   f"messages do not use")


def varint_field(number: int, value: int) -> bytes:
    return encode_varint(number << 3 | VARINT) + encode_varint(value)


def bytes_field(number: int, value: bytes) -> bytes:
    return encode_varint(number << 3 | LENGTH_DELIMITED) + encode_varint(len(value)) + value


def delimited(message: bytes) -> bytes:
    """``message`` behind its varint length, as Java's ``writeDelimitedTo``."""
    return encode_varint(len(message)) + message


def read_delimited(data: bytes | memoryview, pos: int, where: str) -> tuple[bytes, int]:
    """The message ``writeDelimitedTo`` wrote at ``pos``, and the position after it."""
    length, pos = decode_varint(data, pos, where)
    if pos + length > len(data):
        raise CorruptFileError(f"{where}: a Protobuf message of {length} bytes runs past its block")
    return bytes(data[pos:pos + length]), pos + length

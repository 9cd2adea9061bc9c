"""COMMAND log blocks: a rollback of the blocks an earlier delta commit appended.

Why a module of its own: a COMMAND block has no content, only a header (J: ``HoodieCommandBlock``):
COMMAND_BLOCK_TYPE "0" (``HoodieCommandBlockTypeEnum.ROLLBACK_PREVIOUS_BLOCK``, the only command
Hudi defines) and TARGET_INSTANT_TIME, the instant whose blocks readers must drop.
"""

from __future__ import annotations

from typing import NamedTuple

from hoodie_datasource.errors import CorruptFileError, UnsupportedTableError
from hoodie_datasource.log.log_format import BlockType, HeaderKey, LogBlock, encode_block

ROLLBACK_PREVIOUS_BLOCK = "0"  # HoodieCommandBlockTypeEnum.ROLLBACK_PREVIOUS_BLOCK ordinal


class RollbackCommand(NamedTuple):
    instant_time: str | None  # the rollback's instant
    target_instant_time: str  # the instant whose blocks are rolled back


def decode_command_block(block: LogBlock) -> RollbackCommand:
    """The rollback a COMMAND block records (the only command Hudi defines)."""
    if block.block_type != BlockType.COMMAND:
        raise UnsupportedTableError(f"{block.block_type.name} block in {block.where} is not a COMMAND block")
    command = block.header.get(HeaderKey.COMMAND_BLOCK_TYPE)
    if command != ROLLBACK_PREVIOUS_BLOCK:
        raise UnsupportedTableError(f"COMMAND block in {block.where}: command type {command!r} is not supported "
                                    f"(only {ROLLBACK_PREVIOUS_BLOCK!r}, rollback)")
    target = block.target_instant_time
    if not target:
        raise CorruptFileError(f"COMMAND block in {block.where}: rollback without TARGET_INSTANT_TIME")
    return RollbackCommand(block.instant_time, target)


def encode_rollback_command_block(instant_time: str, target_instant_time: str) -> bytes:
    """A COMMAND block rolling back the blocks of ``target_instant_time``; the header order
    (INSTANT_TIME, COMMAND_BLOCK_TYPE, TARGET_INSTANT_TIME) is the one in Hudi-written files."""
    header = {HeaderKey.INSTANT_TIME: instant_time, HeaderKey.COMMAND_BLOCK_TYPE: ROLLBACK_PREVIOUS_BLOCK,
              HeaderKey.TARGET_INSTANT_TIME: target_instant_time}
    return encode_block(BlockType.COMMAND, header, b"")

rule arithmetic
{
    condition:
        filesize > 1 + 2 * 3 - 4 \ 2 % 3 and
        (0x10 | 0o17) & ~1 ^ 255 == (1 << 4) >> 1 + 0 and
        -filesize < 0 and 1KB == 1024 and 2MB == 2097152 and
        9223372036854775807 > -9223372036854775807 - 1
}

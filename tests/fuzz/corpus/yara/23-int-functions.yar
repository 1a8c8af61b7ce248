rule int_functions
{
    condition:
        uint16be(0) == 0x4D5A or uint16(0) == 0x5A4D and
        int8(1) >= -128 and int16(2) != 0 and int32(4) < 0x7fffffff and
        uint8(8) <= 255 and uint32(12) >= 0 and
        int8be(16) == 0 and int16be(18) == 1 and int32be(20) == 2 and
        uint8be(24) == 3 and uint32be(28) == 4 and uint32(uint32(0x3C)) == 0x4550
}

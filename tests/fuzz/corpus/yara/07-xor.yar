rule xor_forms
{
    strings:
        $x0 = "xor all keys" xor
        $x1 = "one key" xor(0x20)
        $x2 = "key range" xor(1-5)
        $x3 = "wide xor" xor wide ascii
        $x4 = "xor private" xor(0-255) private fullword
    condition:
        2 of ($x*)
}

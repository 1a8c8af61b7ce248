rule hex_jumps
{
    strings:
        $j1 = { 01 02 [2] 03 04 }
        $j2 = { 01 [1-3] 02 }
        $j3 = { 01 [4-] 02 }
        $j4 = { 01 [0-250] 02 [-] 03 }
        $j5 = { AA [1] BB [0-1] CC }
    condition:
        any of them
}

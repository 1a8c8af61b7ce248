rule for_in
{
    strings:
        $a = "loop"
    condition:
        for all i in (1..#a) : ( @a[i] + !a[i] <= filesize ) and
        for any i in (0, 2, 4, 8) : ( uint8(i) == 0x41 ) and
        for 2 i in (1..3) : ( i > 1 ) and
        for none x in (0..3) : ( x == 10 )
}

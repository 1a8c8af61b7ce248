rule counts_offsets
{
    strings:
        $a = "needle"
        $h = { 00 01 02 }
    condition:
        #a > 2 and #a in (0..1000) == 1 and @a[1] < @a[2] and !a[1] == 6 and
        @h == @h[1] and !h > 0 and $a at 100 and $h in (0..10) and $a in (@h..@h + 32)
}

rule entry_and_size
{
    strings:
        $a = { E8 00 00 00 00 }
    condition:
        $a at entrypoint or (filesize >= 100 and filesize <= 200) or $a in (0..entrypoint)
}

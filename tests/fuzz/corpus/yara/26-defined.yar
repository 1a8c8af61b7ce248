rule defined_values
{
    strings:
        $a = "maybe"
    condition:
        defined uint32(filesize) or not defined @a[1] or defined (filesize \ uint8(0)) or defined (@a[2] - @a[1])
}

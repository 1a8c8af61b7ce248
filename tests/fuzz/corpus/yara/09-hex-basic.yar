rule hex_basic
{
    strings:
        $mz = { 4D 5A }
        $wild = { 4D 5A ?? ?? 00 00 }
        $nib = { 4? ?A 5? ?? }
        $lower = { de ad be ef }
        $priv = { 50 45 00 00 } private
    condition:
        $mz at 0 and ($wild or $nib or $lower) and $priv
}

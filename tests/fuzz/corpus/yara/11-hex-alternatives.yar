rule hex_alternatives
{
    strings:
        $alt = { 4D ( 5A | 5B ) 90 }
        $nest = { 01 ( 02 ( 03 | 04 ) | 05 ?? ) 06 }
        $jumpalt = { 10 ( 20 [1-2] 30 | 40 ) 50 }
        $notbyte = { 01 ?? 03 ?4 }
        // a comment inside strings
        /* and a block
           comment */
    condition:
        $alt or $nest or $jumpalt or $notbyte
}

rule floats
{
    condition:
        1.5 < 2 and 0.25 * 4 == 1.0 and 3.0 \ 2 > 1 and -2.5 + filesize >= 0.0
}

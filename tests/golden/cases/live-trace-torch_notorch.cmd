cd "$SCRATCH" && $STRATA trace -o t.sqlite -- python3 -c "import os; open(os.environ[\"STRATA_RUN_DIR\"] + \"/python-notorch-1\", \"w\")"

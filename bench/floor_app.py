"""The floor: the cheapest answer a FastAPI/uvicorn app can give on the hub's route.

Every name returns the same constant JSON, so this measures only the framework and the
server, never a job. Start it with the hub's server settings:

    uvicorn bench.floor_app:app --host 127.0.0.1 --port 9000 \
        --loop uvloop --http httptools --no-access-log --log-level warning
"""

from fastapi import FastAPI, Response

PONG = b'{"pong":"world"}'

app = FastAPI()


@app.get("/api/webjobs/{name}")
async def webjob(name: str) -> Response:
    return Response(content=PONG, media_type="application/json")
